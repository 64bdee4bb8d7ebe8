//! What the binaries share at their edges: argument errors as one line with exit status 1 (as
//! the README promises for bad input), and lines on stdout that fail as an error, never a panic,
//! when stdout cannot be written (a full disk, a closed pipe), and errors as one line that says
//! each cause once; and the `--engine` and `--arith` values, mapped onto [`EngineChoice`] and
//! [`ArithChoice`] (the library has no clap in it); and the binaries' argument definitions
//! ([`prove`], [`verify`], [`primenet`]); and `prove`'s front end: [`prove_run`] (a test, to its
//! published outputs), [`work_dir`] (`--work-dir`), [`interrupt`] (Ctrl-C).

pub mod interrupt;
pub mod primenet;
pub mod prove;
pub mod prove_run;
pub mod verify;
pub mod work_dir;

use crate::engine::arith::ArithChoice;
use crate::engine::EngineChoice;
use crate::transform::plan::Arith;
use clap::error::ErrorKind;
use std::io::{self, Write};

/// `--engine`: which engine the user asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The GPU when one is usable, else the CPU.
    Auto,
    /// GMP on the CPU.
    Cpu,
    /// The CUDA GPU; an error when none is usable.
    Gpu,
    /// The CPU twin of the GPU's transform, in any arithmetic (slow: for checks without a GPU).
    Twin,
}

impl From<EngineArg> for EngineChoice {
    fn from(e: EngineArg) -> EngineChoice {
        match e {
            EngineArg::Auto => EngineChoice::Auto,
            EngineArg::Cpu => EngineChoice::Cpu,
            EngineArg::Gpu => EngineChoice::Gpu,
            EngineArg::Twin => EngineChoice::Twin,
        }
    }
}

/// `--arith`: the exact arithmetic of a transform engine (docs/arithmetic.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArithArg {
    /// Per exponent, the arithmetic expected fastest (measured speeds; Goldilocks where another is unmeasured).
    Auto,
    /// GF(2^64 - 2^32 + 1), lengths 2^k.
    Goldilocks,
    /// GF(M61^2) x GF(M31^2) with CRT, lengths 2^k and 3*2^k.
    M61m31,
    /// GF(P1) x GF(P2) on the FP64 units with CRT, lengths 2^k up to 2^22.
    Fp64,
}

impl From<ArithArg> for ArithChoice {
    fn from(a: ArithArg) -> ArithChoice {
        match a {
            ArithArg::Auto => ArithChoice::Auto,
            ArithArg::Goldilocks => ArithChoice::Fixed(Arith::Goldilocks),
            ArithArg::M61m31 => ArithChoice::Fixed(Arith::M61M31),
            ArithArg::Fp64 => ArithChoice::Fixed(Arith::Fp64),
        }
    }
}

/// Parse the command line; `--help` and `--version` print and exit 0, anything wrong prints
/// "`program`: error: …" on one line and exits 1.
pub fn parse_args<T: clap::Parser>(program: &str) -> T {
    match T::try_parse() {
        Ok(args) => args,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                eprintln!("{program}: error: {} (see --help)", one_line(&e.to_string()));
                std::process::exit(1);
            }
        },
    }
}

/// The first paragraph of clap's message on one line, without its "error: " prefix (the usage
/// and tips that follow are left to --help).
fn one_line(message: &str) -> String {
    let text = message
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    match text.strip_prefix("error: ") {
        Some(rest) => rest.to_string(),
        None if text.is_empty() => "invalid arguments".to_string(),
        None => text,
    }
}

/// An error and its causes on one line, "outer: cause: …", leaving out a cause that the message
/// before it already ends with (errors that print their source and also return it).
pub fn error_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string().replace('\n', " ");
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Write `line` and a newline to stdout and flush it.
pub fn print_line(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arith_names_are_the_library_names() {
        use clap::ValueEnum;
        for a in ArithArg::value_variants() {
            let name = a.to_possible_value().unwrap().get_name().to_string();
            match ArithChoice::from(*a) {
                ArithChoice::Auto => assert_eq!(name, "auto"),
                ArithChoice::Fixed(arith) => assert_eq!(Arith::from_name(&name), Some(arith)),
            }
        }
    }

    #[test]
    fn clap_messages_become_one_line() {
        let m = "error: unexpected argument '--frob' found\n\n  tip: to pass '--frob' as a value, use '-- --frob'\n\nUsage: prove <EXPONENT>\n";
        assert_eq!(one_line(m), "unexpected argument '--frob' found");
        assert_eq!(one_line(""), "invalid arguments");
        let m = "error: the following required arguments were not provided:\n  <EXPONENT>\n\nUsage: prove <EXPONENT>\n";
        assert_eq!(one_line(m), "the following required arguments were not provided: <EXPONENT>");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("key file k: {source}")]
    struct Wrapped {
        source: io::Error,
    }

    #[test]
    fn each_cause_is_said_once() {
        let io = || io::Error::new(io::ErrorKind::IsADirectory, "Is a directory (os error 21)");
        let e = anyhow::Error::new(Wrapped { source: io() }).context("cannot load the key");
        assert_eq!(error_line(&e), "cannot load the key: key file k: Is a directory (os error 21)");
        let e = anyhow::Error::new(io()).context("cannot write x\nsecond line");
        assert_eq!(error_line(&e), "cannot write x second line: Is a directory (os error 21)");
    }
}
