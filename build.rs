//! Records the commit the binaries are built from, for `--version` and the scripts' headers:
//! `MERSENNE_CERT_COMMIT` when set at build time, else `git describe` of the source tree
//! (`+dirty` when files differ from that commit, as in a copy of a tree whose .git is stale),
//! else "unknown" (a tree without git). With `system-gmp`, a GMP rebuilt by scripts/gmp.sh
//! reruns it, so that the binaries are linked again with the new library. Also writes the table
//! of the kernel files (kernels/) that src/gpu/module.rs embeds.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=MERSENNE_CERT_COMMIT");
    // A commit moves HEAD (or the branch it names); an edit changes the tree.
    if let Some(p) = git(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={p}");
    }
    if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(&["rev-parse", "--git-path", &r])) {
        println!("cargo:rerun-if-changed={head}");
    }
    for path in ["src", "kernels", "Cargo.toml", "Cargo.lock", "build.rs"] {
        println!("cargo:rerun-if-changed={path}");
    }
    // `--features system-gmp` links .gmp/lib/libgmp.a (scripts/gmp.sh): a rebuilt one relinks.
    if std::env::var_os("CARGO_FEATURE_SYSTEM_GMP").is_some() {
        println!("cargo:rerun-if-changed=.gmp/stamp");
    }
    kernel_table();
    let commit = std::env::var("MERSENNE_CERT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["describe", "--always", "--dirty=+dirty", "--abbrev=12", "--exclude=*"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MERSENNE_CERT_COMMIT={commit}");
}

/// `$OUT_DIR/kernel_files.rs`: every file under kernels/ as (path relative to kernels/, text),
/// for src/gpu/module.rs, which reads kernels/manifest.txt to learn what to compile.
fn kernel_table() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("kernels/ is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("kernels");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let rows: String = files
        .iter()
        .map(|f| {
            let name = f.strip_prefix(&root).expect("under kernels/").to_string_lossy().replace('\\', "/");
            format!("    ({name:?}, include_str!({:?})),\n", f.display().to_string())
        })
        .collect();
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("set by cargo")).join("kernel_files.rs");
    std::fs::write(out, format!("&[\n{rows}]\n")).expect("OUT_DIR is writable");
}
