//! A one-line description of the machine a test ran on (host name, CPU model, core count), for
//! certificates and result lines. The GPU, when used, is named by the engine's own description.

/// "host <name>, <cpu model> x<cores>" from what Linux exposes; missing pieces are left out.
pub fn describe() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).ok();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string())
    });
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut parts = Vec::new();
    if let Some(n) = name {
        parts.push(format!("host {n}"));
    }
    parts.push(format!("{} x{cores}", cpu.unwrap_or_else(|| std::env::consts::ARCH.to_string())));
    parts.join(", ")
}
