//! The pipelined all-port broadcast and reduction (`collectives/esbt.rs`'s trees): how
//! many pieces a part is cut into ([`pieces_for`]) and what that costs
//! ([`pipelined_time`]). Pure functions of the cost model; this machine's figure is
//! [`super::machine::pieces`].

use super::cost::CostModel;

/// The fewest bytes a piece of a pipelined part carries (below, a piece's start-up costs
/// more than its bytes on any link this runtime meets).
pub(crate) const MIN_PIECE: usize = 4 << 10;

/// The most pieces a tree's part is cut into.
pub(crate) const MAX_PIECES: usize = 64;

/// How many pieces each of the d parts of an `m_bytes` message is cut into, so that a
/// node hands piece j on while piece j + 1 arrives. With n pieces the pipelined trees take
/// about `(n + d)(t_s + t_w m/(d n))` (n pieces through a pipeline d + 1 links deep),
/// least at `n = √(t_w m / t_s)`; `t_s` and `t_w` are the cost model's (`t_w` no faster
/// than the links measured: `select::machine`). A part that fits the links' `burst` (the
/// bytes a shaped link passes at core speed after idle time, `Machine::link_burst`; 0 on
/// plain wires) goes whole: its bytes cross every link at core speed, so a pipeline saves
/// nothing and each piece only adds a start-up. Measured on the emulated cubes (slowest
/// rank, `HYPERCUBE_PIPELINE_PIECE` = the model's against a whole part, `osu bcast -m
/// 262144:262144 --per-rank`, 2–3 rounds): 4-cube at 100 Mbit/s 5.7–7.2 ms against
/// 5.1–5.3 (the all-port bound 5.5), at 1 Gbit/s 2.69–2.74 against 2.18–2.26; 3-cube at
/// 1 Gbit/s 1.01–1.20 against 0.84–1.18, at 100 Mbit/s 7.33–7.38 against 7.28–7.32.
/// `HYPERCUBE_PIPELINE_PIECE` (bytes) sets the piece size instead. The same on every node
/// of a job: the model's inputs are (the runtime asks with this machine's model and
/// burst: [`super::machine::pieces`]).
pub(crate) fn pieces_for(m_bytes: usize, d: u32, c: CostModel, burst: usize) -> usize {
    let part = m_bytes / d.max(1) as usize;
    let n = match piece_setting() {
        Some(size) => part.div_ceil(size.max(1)),
        None if part <= burst => 1,
        None => {
            let n = (c.t_w * m_bytes as f64 / c.t_s.max(1e-9)).sqrt().round();
            if n.is_finite() {
                n as usize
            } else {
                1
            }
        }
    };
    n.min(part / MIN_PIECE).clamp(1, MAX_PIECES)
}

/// The time of the pipelined trees for an `m_bytes` broadcast or reduction on the
/// `d`-cube under `c`, cut in `n` pieces (as the runtime cuts it: [`super::machine::pieces`]): the last of n pieces of a
/// part leaves the root after n piece-times and crosses the D − 1 further links of the
/// deepest path (D = d + 1, 1 on a 1-cube), so the bytes take `(n + D − 1) t_w m/(d n)`
/// where every node drives its links at once (`all_port`), `(n + D − 1) t_w m/n` where it
/// serves them in turn; the start-ups are the root's n d, one after the other, and on each
/// further link about d/2 (a node sends to its children in a tree and in the other trees
/// in turn), `(n d + (D − 1) d/2) t_s` (within a tenth of the all-port virtual clock for
/// one piece, d ≤ 4).
pub(crate) fn pipelined_time(
    m_bytes: usize,
    d: u32,
    n: usize,
    c: CostModel,
    all_port: bool,
) -> f64 {
    if d == 0 {
        return 0.0;
    }
    let n = n.max(1) as f64;
    let depth = if d == 1 { 1.0 } else { f64::from(d) + 1.0 };
    let (m, d) = (m_bytes as f64, f64::from(d));
    let piece = if all_port { m / (d * n) } else { m / n };
    (n + depth - 1.0) * c.t_w * piece + (n * d + (depth - 1.0) * d / 2.0) * c.t_s
}

/// `HYPERCUBE_PIPELINE_PIECE`, read once per process.
fn piece_setting() -> Option<usize> {
    static SETTING: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *SETTING.get_or_init(|| {
        std::env::var("HYPERCUBE_PIPELINE_PIECE")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&v| v > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::{pieces_for, CostModel, MAX_PIECES};

    /// On the emulated 4-cube at 100 Mbit/s (80 ns per byte, a 96 KiB bucket): a 256 KiB
    /// broadcast's 64 KiB parts fit the burst and go whole; a 1 MiB one's 256 KiB parts do
    /// not and are cut as on a plain wire (burst 0), which is also what 256 KiB gets there.
    #[test]
    fn a_part_within_the_burst_goes_whole() {
        if std::env::var_os("HYPERCUBE_PIPELINE_PIECE").is_some() {
            return; // the setting decides instead
        }
        let slow = CostModel::new(150e-6, 80e-9);
        let burst = 96 << 10;
        assert_eq!(pieces_for(256 << 10, 4, slow, burst), 1);
        assert_eq!(pieces_for(256 << 10, 3, slow, burst), 1);
        let plain = pieces_for(256 << 10, 4, slow, 0);
        assert!(plain > 1 && plain <= MAX_PIECES, "{plain}");
        assert_eq!(
            pieces_for(1 << 20, 4, slow, burst),
            pieces_for(1 << 20, 4, slow, 0)
        );
        assert!(pieces_for(1 << 20, 4, slow, burst) > 1);
        // Nothing to cut: one piece, burst or not.
        assert_eq!(pieces_for(0, 4, slow, burst), 1);
        assert_eq!(pieces_for(0, 4, slow, 0), 1);
    }
}
