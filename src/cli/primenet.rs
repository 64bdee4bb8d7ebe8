//! `prove --work-dir DIR --primenet`'s options (docs/gimps.md), checked and turned into the
//! PrimeNet client's configuration.

use crate::work::primenet::unreserve::Pick;
use crate::work::primenet::{protocol::WorkPref, Config};
use anyhow::{bail, Result};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pref {
    /// First-time PRP tests (PrimeNet work preference 150).
    Prp,
    /// PRP double checks (151).
    PrpDc,
    /// LL double checks (101).
    LlDc,
}

#[derive(clap::Args, Debug, Clone)]
pub struct PrimeNetArgs {
    /// With --work-dir: talk to PrimeNet (register this computer, get assignments, report each
    /// result, upload the proofs, report progress); needs --user.
    #[arg(long, requires_all = ["work_dir", "user"], conflicts_with = "devices")]
    pub primenet: bool,
    /// PrimeNet's v5 server address (proofs go to proof_upload/ on its host; for the default,
    /// www.mersenne.org's).
    #[arg(long, value_name = "URL", requires = "primenet")]
    pub primenet_url: Option<String>,
    /// The assignments to ask PrimeNet for.
    #[arg(long, value_enum, default_value_t = Pref::Prp)]
    pub work_pref: Pref,
    /// Keep this many unfinished assignments in worktodo.txt, the running one included.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub primenet_queue: usize,
    /// Seconds between progress reports.
    #[arg(long, value_name = "SECS", default_value_t = 3600.0)]
    pub primenet_progress_every: f64,
    /// Hand back an assignment not yet begun that the queue ahead of it would take more than
    /// DAYS to reach at the speed measured here (prime95's rule: 30 days past the days of work).
    #[arg(long, value_name = "DAYS", default_value_t = 31.0)]
    pub primenet_unreserve_days: f64,
    /// Report the results not yet sent, hand back every assignment of the work directory
    /// (removing their lines; certificates stay) and exit.
    #[arg(long, requires = "primenet", conflicts_with = "unreserve")]
    pub unreserve_all: bool,
    /// Hand back the assignment(s) of exponent P (removing their lines) and exit. Only when you
    /// will not finish it.
    #[arg(long, value_name = "P", requires = "primenet")]
    pub unreserve: Option<u32>,
    /// Testing: the first pause before trying the server again (doubling), and the tries.
    #[arg(long, value_name = "SECS", default_value_t = 2.0, hide = true)]
    pub primenet_backoff: f64,
    #[arg(long, value_name = "N", default_value_t = 8, hide = true)]
    pub primenet_retries: u32,
    /// Seconds a request may take.
    #[arg(long, value_name = "SECS", default_value_t = 120.0, hide = true)]
    pub primenet_timeout: f64,
}

fn seconds(option: &str, s: f64) -> Result<Duration> {
    if !(s > 0.0 && s.is_finite() && s < 1e9) {
        bail!("{option} must be a positive number of seconds, got {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

fn days(option: &str, d: f64) -> Result<Duration> {
    if !(d > 0.0 && d.is_finite() && d < 1e6) {
        bail!("{option} must be a positive number of days, got {d}");
    }
    Ok(Duration::from_secs_f64(d * 86400.0))
}

impl PrimeNetArgs {
    /// The client's configuration, with --primenet (`user` is --user, `computer` --computer or
    /// this host's name).
    pub fn config(&self, user: Option<&str>, computer: Option<&str>) -> Result<Option<Config>> {
        if !self.primenet {
            return Ok(None);
        }
        let Some(user) = user.filter(|u| !u.trim().is_empty()) else { bail!("--primenet needs --user NAME") };
        if self.primenet_queue == 0 {
            bail!("--primenet-queue must be at least 1");
        }
        let (url, site) = Config::addresses(self.primenet_url.as_deref()).map_err(anyhow::Error::msg)?;
        let computer = match computer {
            Some(c) => c.to_string(),
            None => std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|_| "mersenne-cert".into()),
        };
        Ok(Some(Config {
            url,
            site,
            user: user.to_string(),
            computer,
            pref: match self.work_pref {
                Pref::Prp => WorkPref::Prp,
                Pref::PrpDc => WorkPref::PrpDc,
                Pref::LlDc => WorkPref::LlDc,
            },
            queue: self.primenet_queue,
            timeout: seconds("--primenet-timeout", self.primenet_timeout)?,
            retries: self.primenet_retries,
            backoff: seconds("--primenet-backoff", self.primenet_backoff)?,
            progress_every: seconds("--primenet-progress-every", self.primenet_progress_every)?,
            unreserve_after: days("--primenet-unreserve-days", self.primenet_unreserve_days)?,
            crash_after_send: false,
        }))
    }

    /// What `--unreserve-all` or `--unreserve P` hands back, if either is given.
    pub fn unreserve_pick(&self) -> Option<Pick> {
        match (self.unreserve_all, self.unreserve) {
            (true, _) => Some(Pick::All),
            (false, Some(p)) => Some(Pick::Exponent(p)),
            (false, None) => None,
        }
    }
}
