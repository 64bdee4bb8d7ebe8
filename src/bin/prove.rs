//! `prove P`: run a Lucas–Lehmer (or `--prp` base-3 PRP) test of 2^P − 1, print one GIMPS-style
//! JSON result line on stdout, and write a signed certificate (`--cert FILE`); `prove --work-dir
//! DIR` runs a GIMPS work directory. The arguments are parsed here and run by
//! [`mersenne_cert::cli::prove_run`]; an error is one line on stderr and exit status 1.

use mersenne_cert::cli::{self, prove::Args};
use mersenne_cert::trace;

fn main() {
    trace::init();
    let args: Args = cli::parse_args("prove");
    let result = cli::prove_run::run(&args);
    // After the run's locals (the engine and its GPU context among them) are dropped.
    trace::mark("exit");
    if let Err(e) = result {
        eprintln!("prove: error: {}", cli::error_line(&e));
        std::process::exit(1);
    }
}
