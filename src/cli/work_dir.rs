//! `prove --work-dir DIR`: the GIMPS work loop ([`crate::work`]) with the arguments' settings,
//! or, with `--devices`, one worker process per GPU; or, with `--unreserve-all` or
//! `--unreserve P`, the assignments handed back to PrimeNet.

use super::interrupt::{interrupt_flag, EXIT_INTERRUPTED};
use super::prove::Args;
use super::EngineArg;
use crate::work::primenet::unreserve::Pick;
use crate::{cert, gpu, host, work};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// `prove --work-dir DIR`: the GIMPS work loop (or, with --devices, one worker process per GPU).
pub fn run(args: &Args, dir: &Path) -> Result<()> {
    let cores = host::cores();
    if let Some(devices) = &args.devices {
        let count = match devices.as_str() {
            "all" => gpu::device_count().context("--devices all counts the GPUs")?,
            n => n
                .parse()
                .ok()
                .filter(|&n: &usize| n > 0)
                .with_context(|| format!("--devices must be 'all' or a count, got '{n}'"))?,
        };
        let mut rest = work::workers::without_devices(&std::env::args_os().skip(1).collect::<Vec<_>>());
        // The workers share the cores.
        if args.jacobi_threads.is_none() {
            rest.extend(["--jacobi-threads".into(), (cores / 4 / count).max(1).to_string().into()]);
        }
        if args.spot_threads.is_none() {
            rest.extend(["--spot-threads".into(), host::spot_threads_per_worker(cores, count).to_string().into()]);
        }
        let _stop = interrupt_flag()?; // the workers save on Ctrl-C; the parent waits for them
        let exe = std::env::current_exe().context("cannot find this program to start its workers")?;
        std::process::exit(work::workers::run_workers(&exe, dir, count, &rest)?);
    }
    if let Some(pick) = args.primenet.unreserve_pick() {
        return unreserve(args, dir, pick);
    }
    let (key, key_path, created) = cert::load_or_create(args.key.as_deref())?;
    if created {
        eprintln!("created a new signing key at {}", key_path.display());
    }
    let wait = args.wait()?;
    let crash_at = match args.crash_at.as_deref() {
        None => None,
        Some("result") => Some(work::CrashPoint::AfterResult),
        Some("state") => Some(work::CrashPoint::AfterState),
        Some("sent") => Some(work::CrashPoint::AfterSend),
        Some(other) => bail!("--crash-at must be 'result', 'state' or 'sent', got '{other}'"),
    };
    let primenet = args.primenet.config(args.user.as_deref(), args.computer.as_deref())?;
    let mut settings = args.settings(None)?;
    if let Some(f) = settings.faults.iter().find(|f| f.iteration == 0) {
        bail!("--inject-fault {}: the iteration must be at least 1", f.iteration);
    }
    // A worker of one GPU (--device N) takes one GPU's share of the cores: its peers on the
    // other GPUs run beside it.
    if args.spot_threads.is_none() && args.device.is_some() && args.engine != EngineArg::Cpu {
        let gpus = gpu::device_count().unwrap_or(1);
        if gpus > 1 {
            settings.spot_threads = host::spot_threads_per_worker(cores, gpus);
            eprintln!(
                "note: spot checks on {} threads: one GPU's share of the {cores} cores ({gpus} GPUs, one worker each)",
                settings.spot_threads
            );
        }
    }
    let cfg = work::WorkConfig {
        dir: dir.to_path_buf(),
        worker: args.device,
        settings,
        key,
        user: args.user.clone(),
        computer: args.computer.clone(),
        wait,
        stop: interrupt_flag()?,
        crash_at,
        primenet,
    };
    match work::run_loop(&cfg)? {
        work::LoopEnd::Finished { done } => {
            eprintln!("work: no usable line left; {done} result(s) written this time");
            Ok(())
        }
        work::LoopEnd::Interrupted => std::process::exit(EXIT_INTERRUPTED),
    }
}

/// `--unreserve-all`, `--unreserve P`: the assignments handed back and their lines removed; an
/// error that names every line left.
fn unreserve(args: &Args, dir: &Path, pick: Pick) -> Result<()> {
    let cfg = args
        .primenet
        .config(args.user.as_deref(), args.computer.as_deref())?
        .context("--unreserve-all and --unreserve need --primenet")?;
    let done = work::primenet::unreserve::run(cfg, dir, args.device, args.ask(), pick)?;
    for (line, why) in &done.left {
        eprintln!("primenet: left in place: '{line}': {why}");
    }
    if !done.left.is_empty() {
        bail!("{} worktodo line(s) not handed back (named above); run the same command again", done.left.len());
    }
    match (done.removed.len(), pick) {
        (0, Pick::Exponent(p)) => bail!("--unreserve {p}: no line of M{p} in the worktodo file(s)"),
        (n, _) => eprintln!("primenet: {n} worktodo line(s) handed back and removed"),
    }
    Ok(())
}
