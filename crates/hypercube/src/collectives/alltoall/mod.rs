//! All-to-all personalized communication (`MPI_Alltoall`, `MPI_Alltoallv`, Grama §4.5).

mod ecube;
mod mesh;
mod pairwise;
mod planned;
mod ring;
mod store_forward;

use bytes::Bytes;

use super::ctx::Ctx;
use super::select::{machine, not_implemented, requested_or_set, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// All-to-all personalized: `blocks[j]` (one per relative rank, all of one length m,
    /// the same m on every member) goes to relative rank j; returns the block each member
    /// sent to this one, by relative rank. Store-and-forward (eq. 4.9), pairwise Alg. 4.10
    /// (eq. 4.10), e-cube with every block in flight at once (all-port; `alltoall/ecube.rs`),
    /// ring (eq. 4.7) or mesh (eq. 4.8).
    #[doc(alias = "MPI_Alltoall")]
    pub fn alltoall(&self, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
        self.check_blocks(blocks)?;
        if blocks.iter().any(|b| b.len() != blocks[0].len()) {
            return Err(self.refuse(Error::InvalidArgument(
                "alltoall: blocks differ in length; use alltoallv".into(),
            )));
        }
        let (alg, c) = self.start(Operation::Alltoall, blocks[0].len(), true)?;
        alltoall_blocks(alg, &c, blocks, blocks[0].len())
    }

    /// [`Subcube::alltoall`] between the caller's memories (the typed forms' core): `data`
    /// holds `size()` blocks of `m` bytes, block t for relative rank t; `out` (as long)
    /// receives the block from each rank. Pairwise, e-cube and store-and-forward exchange
    /// receive in place and send the caller's blocks as they are (`node/landing.rs`,
    /// `lend.rs`) for blocks of at least [`LAND_FROM`](super::LAND_FROM) bytes
    /// (store-and-forward for step messages — p/2 blocks — that long, and it lands the
    /// blocks it passes on in buffers of its own); otherwise the byte form's result is
    /// copied into `out`.
    ///
    /// # Safety
    /// `out .. out + data.len()` must be writable and not otherwise used until this
    /// returns; when it returns `Ok`, every byte of it has been written.
    pub(crate) unsafe fn alltoall_to(&self, data: &[u8], m: usize, out: *mut u8) -> Result<()> {
        let p = self.size() as usize;
        if data.len() != p * m {
            return Err(self.refuse(Error::InvalidArgument(format!(
                "alltoall: {} bytes do not split into {p} blocks of {m}",
                data.len()
            ))));
        }
        let (alg, c) = self.start(Operation::Alltoall, m, true)?;
        let landed = match alg {
            // SAFETY: forwarded.
            Algorithm::Pairwise if m >= super::LAND_FROM => unsafe {
                pairwise::alltoall_landing(&c, data, m, out)
            },
            // SAFETY: forwarded.
            Algorithm::Ecube if m >= super::LAND_FROM => unsafe {
                ecube::alltoall_landing(&c, data, m, out)
            },
            // SAFETY: forwarded.
            // Its step messages are p/2 blocks: landed when they are long, whatever m.
            Algorithm::StoreForward if m * (p / 2).max(1) >= super::LAND_FROM => unsafe {
                store_forward::alltoall_landing(&c, data, m, out)
            },
            _ => {
                let blocks: Vec<Bytes> =
                    data.chunks(m.max(1)).map(Bytes::copy_from_slice).collect();
                let got = alltoall_blocks(alg, &c, &blocks, m)?;
                for (t, b) in got.iter().enumerate() {
                    // SAFETY: `p` blocks of `m` bytes (checked by `alltoall_blocks`) fill
                    // `out` exactly.
                    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), out.add(t * m), m) };
                }
                return Ok(());
            }
        };
        c.guard(landed)
    }

    /// All-to-all personalized with blocks of any lengths: pairwise exchange (Alg. 4.10),
    /// e-cube with every block in flight at once (`alltoall/ecube.rs`), or planned routes
    /// (`alltoall/planned.rs`: the block sizes are exchanged first, then every block goes
    /// along a minimal path that unloads the busiest link, when that pays).
    ///
    /// The automatic choice (no algorithm asked for, no `HYPERCUBE_ALG_ALLTOALLV`): planned
    /// where the links are wires (the start-up probe says so) on subcubes of 2 to 8
    /// dimensions, else pairwise. It cannot depend on the block sizes, which differ between
    /// members until they are exchanged.
    #[doc(alias = "MPI_Alltoallv")]
    pub fn alltoallv(&self, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
        self.check_blocks(blocks)?;
        let mut alg = requested_or_set(Operation::Alltoallv, self.alg, true)?;
        let asked = alg == Algorithm::Planned;
        if alg == Algorithm::Auto {
            let planned = (2..=hypercube_topology::MAX_PLAN_DIM).contains(&self.dim)
                && machine().links_bound(self.dim);
            alg = if planned {
                Algorithm::Planned
            } else {
                Algorithm::Pairwise
            };
        }
        let sizes = if alg == Algorithm::Planned {
            Some(self.block_sizes(blocks)?)
        } else {
            None
        };
        let c = Ctx::new(self.node, self.dim)?.variant(alg);
        let bytes = blocks.iter().map(Bytes::len).max().unwrap_or(0);
        let c = if c.call.is_some() {
            c.traced(Operation::Alltoallv.env_name(), &alg, bytes)
        } else {
            c
        };
        c.guard(match (alg, sizes) {
            (Algorithm::Pairwise, _) => pairwise::alltoall(&c, blocks),
            (Algorithm::Ecube, _) => ecube::alltoall(&c, blocks),
            (Algorithm::Planned, Some(sizes)) => planned::alltoall(&c, blocks, &sizes, asked),
            (other, _) => Err(not_implemented(Operation::Alltoallv, other)),
        })
    }

    /// The route plan that a planned [`Subcube::alltoallv`] follows for the block sizes
    /// `sizes` (p × p bytes, row = sender, p = [`Subcube::size`]): every block's parts and
    /// their paths, and the bytes on every link (`busiest()` over the link rate is its
    /// predicted time). The balanced plan when this handle asks for
    /// [`Algorithm::Planned`] by name; otherwise the one the automatic choice runs —
    /// balanced where it is predicted faster than e-cube, else e-cube. Computed locally, as
    /// every member does; nothing is sent.
    ///
    /// ```
    /// use hypercube::collectives::Algorithm;
    /// use hypercube::topology::plan::patterns::{permutation, transpose};
    /// hypercube::local::run_local(4, |node| {
    ///     let sizes = permutation(4, 1 << 18, |n| transpose(n, 4));
    ///     let plan = node.cube().with(Algorithm::Planned).alltoallv_plan(&sizes).unwrap();
    ///     assert!(plan.busiest() < 2 << 18); // e-cube loads one link with two blocks
    /// });
    /// ```
    pub fn alltoallv_plan(&self, sizes: &[u64]) -> Result<hypercube_topology::Plan> {
        let p = self.size() as usize;
        if sizes.len() != p * p {
            return Err(Error::InvalidArgument(format!(
                "alltoallv_plan: {} sizes for {p} members (p × p = {} expected)",
                sizes.len(),
                p * p
            )));
        }
        planned::choose_plan(self.dim, sizes, &machine(), self.alg == Algorithm::Planned)
    }

    /// Every member's block lengths, row by row (p × p, row = sender), by an allgather of
    /// each member's p lengths.
    fn block_sizes(&self, blocks: &[Bytes]) -> Result<Vec<u64>> {
        let row: Vec<u8> = blocks
            .iter()
            .flat_map(|b| (b.len() as u64).to_le_bytes())
            .collect();
        // Recursive doubling (§4.2.2): the rows are short (8p bytes), so the exchange is
        // start-ups, and it makes the fewest (d per member, against d² for the all-port
        // allgather that the model prefers on wires). Measured on the emulated 6-cube at
        // 20 Mbit/s, 64 ranks on two cores: the exchange took 22–86 ms all-port, and the
        // planned Table 5.4a call 15 ms less with this one (docs/perf/routing.md).
        let rows = Subcube {
            alg: Algorithm::Hypercube,
            ..*self
        }
        .allgather(Bytes::from(row))?;
        let mut sizes = Vec::with_capacity(blocks.len() * blocks.len());
        for (src, r) in rows.iter().enumerate() {
            if r.len() != 8 * blocks.len() {
                return Err(Error::InvalidArgument(format!(
                    "alltoallv: member {src} passed {} blocks, this member {}: every member \
                     passes one block per member",
                    r.len() / 8,
                    blocks.len()
                )));
            }
            sizes.extend(
                r.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8 bytes"))),
            );
        }
        Ok(sizes)
    }

    fn check_blocks(&self, blocks: &[Bytes]) -> Result<()> {
        super::ctx::check_dim(self.node, self.dim)?;
        if blocks.len() != self.size() as usize {
            return Err(self.refuse(Error::InvalidArgument(format!(
                "alltoall: {} blocks passed for {} members",
                blocks.len(),
                self.size()
            ))));
        }
        Ok(())
    }
}

/// Copy block `t` of `data` (`m` bytes each) to block `t` of `out`: a member's own block
/// in the forms that receive in place.
///
/// # Safety
/// Block `t` of `out` must be writable and not otherwise used meanwhile; `data` is other
/// memory.
pub(super) unsafe fn copy_block(data: &[u8], out: *mut u8, t: usize, m: usize) {
    let block = &data[t * m..(t + 1) * m];
    // SAFETY: forwarded to the caller.
    unsafe { std::ptr::copy_nonoverlapping(block.as_ptr(), out.add(t * m), m) };
}

/// The byte form's algorithms: the block from each relative rank, each checked to be `m`
/// bytes long.
fn alltoall_blocks(alg: Algorithm, c: &Ctx<'_>, blocks: &[Bytes], m: usize) -> Result<Vec<Bytes>> {
    let out = c.guard(match alg {
        Algorithm::StoreForward => store_forward::alltoall(c, blocks),
        Algorithm::Pairwise => pairwise::alltoall(c, blocks),
        Algorithm::Ecube => ecube::alltoall(c, blocks),
        Algorithm::Ring => ring::alltoall(c, blocks),
        Algorithm::Mesh => mesh::alltoall(c, blocks),
        other => Err(not_implemented(Operation::Alltoall, other)),
    })?;
    if out.iter().any(|b| b.len() != m) {
        return Err(super::blocks::unequal_blocks("alltoall"));
    }
    Ok(out)
}

/// The error that names a landing all-to-all's message `b` of another length than a
/// block's `m` bytes, from relative rank `from` (nothing of it was written).
fn wrong_block(from: u32, b: &Bytes, m: usize) -> crate::error::Error {
    super::blocks::wrong_length(b, 1, m, "alltoall", from)
}
