//! The buffers of one message size: made before the timer starts, so that a timed call
//! pays for the transfer and nothing else.

use bytes::Bytes;
use hypercube_bench::Bench;

use crate::Form;

/// The buffers of one size of a collective: the f32 vector (for reductions), one block,
/// and p blocks (alltoall, scatter), all views of the rank's data without copies.
pub(crate) struct Buffers {
    pub(crate) floats: Vec<f32>,
    pub(crate) block: Bytes,
    pub(crate) blocks: Vec<Bytes>,
    /// Which form of bcast, allgather and alltoall to call.
    pub(crate) form: Form,
    /// The owned input of the `vec` and `serde` forms, built before the timer starts.
    pub(crate) owned: Option<Vec<f32>>,
    /// The owned per-member values of `alltoall` in the `serde` form.
    pub(crate) owned_values: Option<Vec<Vec<f32>>>,
    /// The result buffer of the `into` form (allocated once per size, outside the timer).
    pub(crate) out: Vec<f32>,
}

impl Buffers {
    pub(crate) fn new(bench: Bench, s: usize, p: usize, a: &Bytes, me: u32) -> Buffers {
        let count = s / 4;
        let nf = if matches!(bench, Bench::ReduceScatter | Bench::Alltoall) {
            count * p
        } else {
            count
        };
        let floats: Vec<f32> = (0..nf).map(|k| (k % 7) as f32 + me as f32).collect();
        let blocks = match bench {
            Bench::Alltoall | Bench::Scatter => {
                (0..p).map(|j| a.slice(j * s..(j + 1) * s)).collect()
            }
            _ => Vec::new(),
        };
        let mut out = vec![
            0.0;
            if bench == Bench::Allgather {
                count * p
            } else {
                nf
            }
        ];
        if bench == Bench::Allgather {
            // The `in-place` form's own block, at this rank's place.
            out[me as usize * count..][..count].copy_from_slice(&floats[..count]);
        }
        Buffers {
            floats,
            block: a.slice(..s),
            blocks,
            form: Form::Bytes,
            owned: None,
            owned_values: None,
            out,
        }
    }

    /// Does each call of `bench` in this form consume an owned input, made anew before the
    /// next ([`Buffers::refill`])? The same on every rank (a broadcast's leaves make an
    /// empty one).
    pub(crate) fn consumes_input(&self, bench: Bench) -> bool {
        matches!(bench, Bench::Bcast | Bench::Allgather | Bench::Alltoall)
            && matches!(self.form, Form::Vec | Form::Serde | Form::Buf)
    }

    /// Before a timed call of bcast, allgather or alltoall in the `vec` or `serde` form: the
    /// owned input that form consumes (a copy of `floats`, made outside the timed interval
    /// as the byte form's buffer is). Only for those forms: the copy is untimed, but with
    /// more ranks than cores it still takes a core from the ranks that are inside their timed
    /// call (a p-MiB copy per rank and call at 1 MiB all-to-all was a fifth of the job's CPU
    /// samples), and Open MPI's side makes no such copy.
    /// A broadcast's leaves pass an empty vector: only its root (rank 0) makes the copy.
    pub(crate) fn refill(&mut self, bench: Bench, p: usize, me: u32) {
        if !self.consumes_input(bench) || (bench == Bench::Bcast && me != 0) {
            return;
        }
        if self.form == Form::Serde && bench == Bench::Alltoall {
            let n = self.floats.len() / p.max(1);
            self.owned_values = Some(self.floats.chunks(n.max(1)).map(<[f32]>::to_vec).collect());
        } else {
            self.owned = Some(self.floats.clone());
        }
    }
}
