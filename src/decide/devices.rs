//! Which GPUs a piece of work may use (`verify --devices LIST|all`, `prove --device N`), and the
//! ones of them this host has: counted through the driver, never by opening a context.

use crate::engine::EngineError;
use std::str::FromStr;

/// Which GPUs the work may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    All,
    /// CUDA ordinals, distinct.
    List(Vec<usize>),
}

impl FromStr for Devices {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "all" {
            return Ok(Devices::All);
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let d: usize = part
                .trim()
                .parse()
                .map_err(|_| format!("'{s}' is not 'all' or a comma-separated list of GPU numbers (e.g. 0,1)"))?;
            if list.contains(&d) {
                return Err(format!("GPU {d} is listed twice in '{s}'"));
            }
            list.push(d);
        }
        Ok(Devices::List(list))
    }
}

impl Devices {
    /// The CUDA ordinals listed, or `None` for all.
    pub fn ordinals(&self) -> Option<Vec<usize>> {
        match self {
            Devices::All => None,
            Devices::List(l) => Some(l.clone()),
        }
    }

    /// The most GPUs this can name without looking (`None` for all).
    pub fn most(&self) -> Option<usize> {
        self.ordinals().map(|l| l.len())
    }

    /// The GPUs this names on this host (an error when there is none, or one named is missing):
    /// the CUDA libraries looked for and the devices counted, no context opened.
    pub fn resolve(&self) -> Result<Vec<usize>, EngineError> {
        let n = crate::gpu::device_count()?;
        if n == 0 {
            return Err(EngineError::NoGpu("the CUDA driver sees no device".into()));
        }
        match self {
            Devices::All => Ok((0..n).collect()),
            Devices::List(l) => match l.iter().find(|&&d| d >= n) {
                Some(d) => Err(EngineError::NoGpu(format!("there is no GPU {d}: this host has {n} (0..{n})"))),
                None => Ok(l.clone()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse() {
        assert_eq!("all".parse::<Devices>(), Ok(Devices::All));
        assert_eq!("0,2, 3".parse::<Devices>(), Ok(Devices::List(vec![0, 2, 3])));
        assert!("0,0".parse::<Devices>().unwrap_err().contains("twice"));
        assert!("gpu0".parse::<Devices>().unwrap_err().contains("not 'all'"));
        assert!("".parse::<Devices>().is_err());
        assert!("-1".parse::<Devices>().is_err());
        assert_eq!((Devices::All.most(), Devices::List(vec![1, 4]).most()), (None, Some(2)));
    }
}
