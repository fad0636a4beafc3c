//! Link rates and burst sizes, read as `tc(8)` reads them, so that what a user types for
//! `hcrun --link-rate` means exactly what it would mean to `tc qdisc ... tbf rate`.

use std::fmt;

/// A link rate in bits per second, with the text the user gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    /// Bits per second (> 0).
    pub bits_per_sec: u64,
}

/// `tc`'s rate suffixes (compared without regard to case, as `tc` does), with their scale
/// in bits per second. A bare number is bits per second.
const RATE_UNITS: &[(&str, f64)] = &[
    ("bit", 1.0),
    ("kibit", 1024.0),
    ("kbit", 1e3),
    ("mibit", 1024.0 * 1024.0),
    ("mbit", 1e6),
    ("gibit", 1024.0 * 1024.0 * 1024.0),
    ("gbit", 1e9),
    ("tibit", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("tbit", 1e12),
    ("bps", 8.0),
    ("kibps", 8.0 * 1024.0),
    ("kbps", 8e3),
    ("mibps", 8.0 * 1024.0 * 1024.0),
    ("mbps", 8e6),
    ("gibps", 8.0 * 1024.0 * 1024.0 * 1024.0),
    ("gbps", 8e9),
    ("tibps", 8.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("tbps", 8e12),
];

/// Link rates of historical machines, by name, each from a published source:
/// - `ipsc860`: the Intel iPSC/860, "the maximum data transfer rate between adjacent nodes
///   on the hypercube is 20Mbps" (Oak Ridge National Laboratory, Computational Science
///   Education Project, *Intel iPSC/860*, §2.2 "The Interconnection Network",
///   <http://www.phy.ornl.gov/csep/CSEP/IP/NODE4.html>).
pub const PRESETS: &[(&str, u64)] = &[("ipsc860", 20_000_000)];

/// The slowest link hcrun builds: 100 kbit/s (a 64 KiB segment takes 5 s; the start-up
/// link probe's priming transfer, 3 s per dimension).
pub const MIN_RATE_BITS: u64 = 100_000;
/// The fastest: tbf's rate is a 64-bit byte count, but above this a veth is not shaped,
/// it is only as fast as the cores.
pub const MAX_RATE_BITS: u64 = 1_000_000_000_000;

/// The forms `--link-rate` accepts, for error messages and `--help`.
pub const RATE_FORMS: &str = "a number with a unit as tc reads it: 100mbit, 1gbit, 10Mibit, \
    500kbit, 2.8MBps (bytes per second: Bps, KBps, MBps, GBps, KiBps, MiBps, GiBps), or a bare \
    number of bits per second; between 100kbit and 1tbit; or a historical machine: ipsc860 \
    (20mbit)";

/// A decimal number and an optional unit of `units` (compared without regard to case, as
/// `tc` does), as the number times the unit's scale; `None` if either is malformed.
fn scaled(t: &str, units: &[(&str, f64)]) -> Option<f64> {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().ok()?;
    let scale = if unit.is_empty() {
        1.0
    } else {
        units
            .iter()
            .find(|(u, _)| u.eq_ignore_ascii_case(unit))
            .map(|(_, f)| *f)?
    };
    Some(value * scale)
}

/// Parse a rate as `tc` does (`get_rate64`: a decimal number, then an optional suffix,
/// compared case-insensitively; so `mbps` is mega*bytes* per second, as in `tc`).
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    if let Some((_, bits)) = PRESETS.iter().find(|(n, _)| n.eq_ignore_ascii_case(t)) {
        return Ok(Rate {
            bits_per_sec: *bits,
        });
    }
    let bits = scaled(t, RATE_UNITS)
        .ok_or_else(|| format!("--link-rate {s:?} is not a rate: give {RATE_FORMS}"))?;
    if !bits.is_finite() || bits < MIN_RATE_BITS as f64 || bits > MAX_RATE_BITS as f64 {
        return Err(format!(
            "--link-rate {s:?} is out of range: give {RATE_FORMS}"
        ));
    }
    Ok(Rate {
        bits_per_sec: bits.round() as u64,
    })
}

impl Rate {
    /// Bytes per second.
    pub fn bytes_per_sec(&self) -> f64 {
        self.bits_per_sec as f64 / 8.0
    }

    /// The form handed to `tc` (exact: bits per second).
    pub fn tc(&self) -> String {
        format!("{}bit", self.bits_per_sec)
    }

    /// The default token-bucket depth for this rate: one millisecond of traffic, at least
    /// 96 KiB. The bucket must hold a whole GSO segment (64 KiB and headers), or `tbf`
    /// cuts every segment into packets that two cores cannot shape fast enough.
    pub fn default_burst(&self) -> u64 {
        ((self.bits_per_sec / 8) / 1000).max(DEFAULT_MIN_BURST)
    }
}

/// The smallest burst hcrun uses by default (and accepts): 96 KiB.
pub const DEFAULT_MIN_BURST: u64 = 96 * 1024;
/// The smallest `--link-burst` accepted: a GSO segment must fit.
pub const MIN_BURST: u64 = 66 * 1024;

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bits_per_sec as f64;
        if b >= 1e9 && b % 1e7 == 0.0 {
            write!(f, "{} Gbit/s", b / 1e9)
        } else if b >= 1e6 && b % 1e4 == 0.0 {
            write!(f, "{} Mbit/s", b / 1e6)
        } else if b >= 1e3 {
            write!(f, "{} kbit/s", b / 1e3)
        } else {
            write!(f, "{b} bit/s")
        }
    }
}

/// `tc`'s size suffixes (`get_size`): binary multiples of bytes, or of bits.
const SIZE_UNITS: &[(&str, f64)] = &[
    ("b", 1.0),
    ("k", 1024.0),
    ("kb", 1024.0),
    ("kib", 1024.0),
    ("m", 1024.0 * 1024.0),
    ("mb", 1024.0 * 1024.0),
    ("mib", 1024.0 * 1024.0),
    ("g", 1024.0 * 1024.0 * 1024.0),
    ("gb", 1024.0 * 1024.0 * 1024.0),
    ("gib", 1024.0 * 1024.0 * 1024.0),
    ("kbit", 1024.0 / 8.0),
    ("mbit", 1024.0 * 1024.0 / 8.0),
    ("gbit", 1024.0 * 1024.0 * 1024.0 / 8.0),
];

/// The forms `--link-burst` accepts.
pub const BURST_FORMS: &str =
    "a size as tc reads it: 96kb, 128k, 1mb, 65536 (bytes); at least 66kb, at most 1gb";

/// Parse a token-bucket size (`--link-burst`) as `tc` reads sizes.
pub fn parse_burst(s: &str) -> Result<u64, String> {
    let bytes = scaled(s.trim(), SIZE_UNITS)
        .ok_or_else(|| format!("--link-burst {s:?} is not a size: give {BURST_FORMS}"))?;
    if !bytes.is_finite() || bytes < MIN_BURST as f64 || bytes > (1u64 << 30) as f64 {
        return Err(format!(
            "--link-burst {s:?} is out of range: give {BURST_FORMS}"
        ));
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_as_tc_reads_them() {
        assert_eq!(parse_rate("100mbit").unwrap().bits_per_sec, 100_000_000);
        assert_eq!(parse_rate("1gbit").unwrap().bits_per_sec, 1_000_000_000);
        assert_eq!(parse_rate("1Gbit").unwrap().bits_per_sec, 1_000_000_000);
        assert_eq!(parse_rate("2.8MBps").unwrap().bits_per_sec, 22_400_000);
        // tc compares suffixes without case: mbps is megabytes per second there too.
        assert_eq!(parse_rate("1mbps").unwrap().bits_per_sec, 8_000_000);
        assert_eq!(
            parse_rate("10Mibit").unwrap().bits_per_sec,
            10 * 1024 * 1024
        );
        assert_eq!(parse_rate("640000").unwrap().bits_per_sec, 640_000);
        assert_eq!(parse_rate("100mbit").unwrap().tc(), "100000000bit");
        assert_eq!(parse_rate("100mbit").unwrap().to_string(), "100 Mbit/s");
        assert_eq!(parse_rate("ipsc860").unwrap().bits_per_sec, 20_000_000);
    }

    #[test]
    fn bad_rates_name_the_accepted_forms() {
        for bad in [
            "fast",
            "0mbit",
            "",
            "mbit",
            "1.2.3mbit",
            "-5mbit",
            "100 furlongs",
            "1e3mbit",
        ] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("100mbit") && e.contains("2.8MBps"), "{bad}: {e}");
        }
        assert!(parse_rate("2tbit").unwrap_err().contains("out of range"));
        assert!(parse_rate("50kbit").unwrap_err().contains("out of range"));
    }

    #[test]
    fn bursts() {
        assert_eq!(parse_burst("96kb").unwrap(), 96 * 1024);
        assert_eq!(parse_burst("1mb").unwrap(), 1 << 20);
        assert_eq!(parse_burst("131072").unwrap(), 131_072);
        assert!(parse_burst("1k").unwrap_err().contains("at least 66kb"));
        assert!(parse_burst("lots").unwrap_err().contains("96kb"));
        assert_eq!(parse_rate("100mbit").unwrap().default_burst(), 96 * 1024);
        assert_eq!(parse_rate("10gbit").unwrap().default_burst(), 1_250_000);
    }
}
