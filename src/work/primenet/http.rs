//! The HTTP(S) transport: ureq with rustls (no system OpenSSL), a timeout on every request, and
//! one error type that says whether trying again later can help (the server down, a dropped
//! connection, a timeout, an HTTP 5xx) or not.

use std::fmt;
use std::time::Duration;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetError {
    /// Unreachable, dropped, timed out, or a 5xx: worth trying again later.
    Down(String),
    /// An answer that trying again will not change (an HTTP 4xx).
    Refused(String),
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::Down(why) => write!(f, "server unreachable: {why}"),
            NetError::Refused(why) => write!(f, "refused: {why}"),
        }
    }
}

impl std::error::Error for NetError {}

/// An HTTP client.
pub struct Http {
    agent: ureq::Agent,
}

impl Http {
    pub fn new(timeout: Duration) -> Http {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(format!("mersenne-cert/{}", crate::VERSION))
            .build();
        Http { agent: config.into() }
    }

    /// GET `url` with `query`; the body of a 2xx answer (or of a 409, which the proof upload
    /// answers with a JSON body).
    pub fn get(&self, url: &str, query: &[(&str, String)]) -> Result<String, NetError> {
        let q = query.iter().map(|(k, v)| (*k, v.as_str()));
        Self::body(self.agent.get(url).query_pairs(q).call())
    }

    /// POST `data` to `url` with `query` as a multipart/form-data field named `field` (the proof
    /// upload's chunks).
    pub fn post_part(&self, url: &str, query: &[(&str, String)], field: &str, data: &[u8]) -> Result<String, NetError> {
        let boundary = format!("mersenne-cert-{:016x}", rand_u64());
        let mut body = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"\r\n\r\n").into_bytes();
        body.extend_from_slice(data);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let q = query.iter().map(|(k, v)| (*k, v.as_str()));
        let req = self
            .agent
            .post(url)
            .query_pairs(q)
            .header("Content-Type", format!("multipart/form-data; boundary={boundary}"));
        Self::body(req.send(&body[..]))
    }

    fn body(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<String, NetError> {
        let mut resp = r.map_err(|e| NetError::Down(e.to_string()))?;
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().map_err(|e| NetError::Down(e.to_string()))?;
        match status {
            200..=299 | 409 => Ok(text),
            500..=599 => Err(NetError::Down(format!("HTTP {status}"))),
            _ => Err(NetError::Refused(format!("HTTP {status}: {}", text.chars().take(200).collect::<String>()))),
        }
    }
}

fn rand_u64() -> u64 {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).map(|_| u64::from_le_bytes(b)).unwrap_or(0x5eed)
}
