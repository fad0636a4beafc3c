//! Neighbour exchange on a subcube: every member swaps a block with its partner across one
//! dimension ([`Subcube::exchange`]), or with its partner across every dimension at once
//! ([`Subcube::exchange_neighbours`], the halo exchange of a program whose data lives on
//! the cube's links), or with any partners — the neighbours of a mesh embedding
//! ([`Subcube::exchange_with`]). Each node posts its receives before it starts its sends, so an
//! exchange cannot deadlock at any size — also above the eager limit, where a plain `send`
//! waits for its receive (two partners that both `send` 8 MiB first wait for each other
//! forever). Typed forms over [`Pod`] slices and owned vectors, and a serde form.
//!
//! Like every collective, an exchange is a call of the whole subcube: every member calls
//! it, in the same order as its other collectives, with the same dimension argument. The
//! blocks may have any lengths (a partner need not know the length it receives).

use bytes::Bytes;
use hypercube_topology::NodeId;
use serde::{de::DeserializeOwned, Serialize};

use super::ctx::Ctx;
use super::element::{decode, encode, encode_vec};
use super::pod::Pod;
use super::Subcube;
use crate::error::{Error, Result};
use crate::wire::codec;

impl Subcube<'_> {
    /// Swap `data` with the partner across dimension `j` of the subcube (the member whose
    /// relative rank differs from this one's in bit `j`, `j < dim`); returns the
    /// partner's block. Every member calls it with the same `j`. The receive is posted
    /// before the send starts: no deadlock at any size (one round, both directions of the
    /// link at once: t_s + t_w·m).
    ///
    /// ```
    /// hypercube::local::run_local(2, |node| {
    ///     let me = node.mynode() as u8;
    ///     // Pairs across dimension 1: 0 <-> 2, 1 <-> 3.
    ///     let got = node.cube().exchange(1, bytes::Bytes::from(vec![me; 3])).unwrap();
    ///     assert_eq!(got[..], [me ^ 2; 3]);
    /// });
    /// ```
    pub fn exchange(&self, j: u32, data: Bytes) -> Result<Bytes> {
        self.check_exchange_dim(j)?;
        let ctx = self.exchange_ctx(data.len())?;
        ctx.sendrecv(ctx.me ^ (1 << j), data, ctx.me ^ (1 << j))
    }

    /// Swap blocks with the partner across every dimension of the subcube at once:
    /// `blocks[j]` (any length) goes to the partner across dimension `j`; returns what each
    /// partner sent, by dimension (`dim` blocks). Every receive is posted before any send
    /// starts, so it cannot deadlock at any size; all links are busy at once.
    pub fn exchange_neighbours(&self, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
        let d = self.dim();
        if blocks.len() != d as usize {
            return Err(Error::InvalidArgument(format!(
                "exchange_neighbours: {} blocks for a subcube of dimension {d}: pass one block \
                 per dimension (the partner across dimension j gets blocks[j])",
                blocks.len()
            )));
        }
        let ctx = self.exchange_ctx(blocks.iter().map(Bytes::len).sum())?;
        let me = ctx.me;
        swap(&ctx, (0..d).zip(blocks).map(|(j, b)| (me ^ (1 << j), b)))
    }

    /// Swap blocks with any partners in the subcube — the neighbours of a mesh or ring
    /// embedding (`hypercube::topology::Mesh::successor` / `predecessor`), which differ from
    /// this node across a dimension that depends on its position: `partners[i]` is
    /// `(node, block)`, the block going to that physical node; returns what each partner
    /// sent to this one, in the same order. The pairing must be symmetric (whoever this
    /// node lists lists this node) and every member of the subcube makes the call. Every
    /// receive is posted before any send starts: no deadlock at any size. A partner listed
    /// twice (a periodic axis of length 2, where successor and predecessor coincide) sends
    /// two messages, which pair up in list order on both sides.
    ///
    /// The blocks go along their e-cube routes, each straight to its partner. With
    /// [`Subcube::with`]`(`[`Algorithm::Planned`](super::Algorithm::Planned)`)` (every
    /// member alike) and partners listed once each, they go along planned routes instead:
    /// the exchange runs as a planned [`Subcube::alltoallv`] whose other blocks are empty
    /// (`docs/routing.md`) — worth its size exchange when partners are several links apart
    /// and their e-cube routes share links; a mesh's neighbours are one link apart already.
    ///
    /// ```
    /// use hypercube::topology::{Boundary, Mesh};
    /// hypercube::local::run_local(3, |node| {
    ///     // A 2 x 4 mesh, periodic along the rows: halos along axis 1.
    ///     let mesh = Mesh::new(&[2, 4], &[Boundary::Closed, Boundary::Periodic], 3).unwrap();
    ///     let me = node.mynode();
    ///     let succ = mesh.successor(me, 1).unwrap().unwrap();
    ///     let pred = mesh.predecessor(me, 1).unwrap().unwrap();
    ///     let got = node
    ///         .cube()
    ///         .exchange_with_slice(&[(succ, vec![me]), (pred, vec![me])])
    ///         .unwrap();
    ///     assert_eq!(got, vec![vec![succ], vec![pred]]);
    /// });
    /// ```
    pub fn exchange_with(&self, partners: &[(NodeId, Bytes)]) -> Result<Vec<Bytes>> {
        let (base, size) = (self.base(), self.size());
        for &(n, _) in partners {
            if n.wrapping_sub(base) >= size || n == self.node.mynode() {
                return Err(Error::InvalidNode {
                    node: i64::from(n),
                    what: format!(
                        "exchange partner (another member of the subcube of dimension {} \
                         containing node {})",
                        self.dim(),
                        self.node.mynode()
                    ),
                    first: base,
                    last: base + size - 1,
                });
            }
        }
        let distinct = {
            let mut ns: Vec<NodeId> = partners.iter().map(|&(n, _)| n).collect();
            ns.sort_unstable();
            ns.windows(2).all(|w| w[0] != w[1])
        };
        if self.alg == super::Algorithm::Planned && distinct {
            // Along planned routes: the exchange as an alltoallv whose other blocks are
            // empty (`alltoall/planned.rs`), for partners that are not neighbours.
            let mut blocks = vec![Bytes::new(); size as usize];
            for (n, b) in partners {
                blocks[(n - base) as usize] = b.clone();
            }
            let got = self.alltoallv(&blocks)?;
            return Ok(partners
                .iter()
                .map(|&(n, _)| got[(n - base) as usize].clone())
                .collect());
        }
        let ctx = self.exchange_ctx(partners.iter().map(|(_, b)| b.len()).sum())?;
        swap(&ctx, partners.iter().map(|(n, b)| (n - base, b)))
    }

    /// [`Subcube::exchange_with`] of slices of plain data: returns each partner's slice,
    /// in the order of `partners`.
    pub fn exchange_with_slice<T: Pod, B: AsRef<[T]>>(
        &self,
        partners: &[(NodeId, B)],
    ) -> Result<Vec<Vec<T>>> {
        let bytes: Vec<(NodeId, Bytes)> = partners
            .iter()
            .map(|(n, b)| (*n, encode(b.as_ref())))
            .collect();
        self.exchange_with(&bytes)?
            .iter()
            .map(|b| decode(b, None, "exchange_with_slice"))
            .collect()
    }

    /// [`Subcube::exchange`] of a slice of plain data (one copy in, one copy out); the
    /// partner's slice may have another length.
    pub fn exchange_slice<T: Pod>(&self, j: u32, data: &[T]) -> Result<Vec<T>> {
        let got = self.exchange(j, encode(data))?;
        decode(&got, None, "exchange_slice")
    }

    /// [`Subcube::exchange`] of an owned vector, sent without copying it (one copy out).
    pub fn exchange_vec<T: Pod>(&self, j: u32, data: Vec<T>) -> Result<Vec<T>> {
        let (bytes, _shared) = encode_vec(data);
        let got = self.exchange(j, bytes)?;
        decode(&got, None, "exchange_vec")
    }

    /// [`Subcube::exchange_neighbours`] of slices of plain data: `blocks[j]` goes to the
    /// partner across dimension `j`; returns each partner's slice, by dimension.
    pub fn exchange_neighbours_slice<T: Pod, B: AsRef<[T]>>(
        &self,
        blocks: &[B],
    ) -> Result<Vec<Vec<T>>> {
        let bytes: Vec<Bytes> = blocks.iter().map(|b| encode(b.as_ref())).collect();
        self.exchange_neighbours(&bytes)?
            .iter()
            .map(|b| decode(b, None, "exchange_neighbours_slice"))
            .collect()
    }

    /// [`Subcube::exchange`] of serde values: returns the partner's value (another type
    /// than `V` on the partner is an [`Error::TypeMismatch`]).
    pub fn exchange_value<V: Serialize + DeserializeOwned>(&self, j: u32, value: &V) -> Result<V> {
        let bytes = Bytes::from(codec::encode_typed(value)?);
        let got = self.exchange(j, bytes)?;
        codec::decode_typed(&got, self.base() | (self.rank() ^ (1 << j)))
    }

    /// `j` must name a dimension of the subcube (checked alike on every member, before the
    /// call draws its tag).
    fn check_exchange_dim(&self, j: u32) -> Result<()> {
        if j >= self.dim() {
            return Err(Error::InvalidArgument(format!(
                "exchange: dimension {j} is not one of the subcube's (0 .. {}): the partner \
                 across dimension j differs in bit j of the relative rank",
                self.dim()
            )));
        }
        Ok(())
    }

    /// The context of one exchange (checks the subcube's dimension, draws the tag).
    fn exchange_ctx(&self, bytes: usize) -> Result<Ctx<'_>> {
        let ctx = Ctx::new(self.node, self.dim())?;
        Ok(if ctx.call.is_some() {
            ctx.traced("exchange", &"pairwise", bytes)
        } else {
            ctx
        })
    }
}

/// Send each block to its partner (a relative rank) and receive one block from each: every
/// receive is posted before the first send starts, so large blocks cannot deadlock; the
/// received blocks in the order of `pairs`.
fn swap<'b>(
    ctx: &Ctx<'_>,
    pairs: impl Iterator<Item = (u32, &'b Bytes)> + Clone,
) -> Result<Vec<Bytes>> {
    let recvs = pairs
        .clone()
        .map(|(n, _)| ctx.irecv(n))
        .collect::<Result<Vec<_>>>()?;
    let sends = pairs
        .map(|(n, b)| ctx.isend(n, b.clone()))
        .collect::<Result<Vec<_>>>()?;
    let got = recvs
        .into_iter()
        .map(|r| r.wait().map(crate::base::message::Message::into_data))
        .collect::<Result<Vec<_>>>()?;
    for s in sends {
        s.wait()?;
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::super::Algorithm;
    use crate::error::Error;
    use crate::local::run_local;

    /// 8 MiB both ways across every dimension, byte and typed forms.
    #[test]
    fn exchange_large_blocks_across_every_dimension() {
        run_local(2, |node| {
            let me = node.mynode();
            let cube = node.cube();
            for j in 0..2 {
                let big = Bytes::from(vec![me as u8; 8 << 20]);
                let got = cube.exchange(j, big).unwrap();
                assert_eq!(got.len(), 8 << 20);
                assert!(got.iter().all(|&b| u32::from(b) == me ^ (1 << j)));
                let v: Vec<u64> = vec![u64::from(me); 1 << 20];
                let got = cube.exchange_vec(j, v).unwrap();
                assert!(got.len() == 1 << 20 && got.iter().all(|&x| x == u64::from(me ^ (1 << j))));
                // Different lengths on the two sides.
                let mine = vec![me as f32; me as usize + 1];
                let got = cube.exchange_slice(j, &mine).unwrap();
                assert_eq!(
                    got,
                    vec![(me ^ (1 << j)) as f32; (me ^ (1 << j)) as usize + 1]
                );
            }
            let halo: Vec<Vec<u32>> = (0..2).map(|j| vec![me * 10 + j; 3 << 20]).collect();
            let got = cube.exchange_neighbours_slice(&halo).unwrap();
            for (j, g) in got.iter().enumerate() {
                let from = me ^ (1 << j);
                assert!(g.len() == 3 << 20 && g.iter().all(|&x| x == from * 10 + j as u32));
            }
            let s: String = cube.exchange_value(0, &format!("n{me}")).unwrap();
            assert_eq!(s, format!("n{}", me ^ 1));
            // A subcube: pairs exchange across its only dimension.
            let pair = node
                .subcube(1)
                .exchange(0, Bytes::from(vec![me as u8]))
                .unwrap();
            assert_eq!(u32::from(pair[0]), me ^ 1);
        });
    }

    /// A 2-D mesh halo (4 x 2, periodic along axis 0 of length 4) with 8 MiB blocks.
    #[test]
    fn exchange_with_mesh_neighbours() {
        use hypercube_topology::{Boundary, Mesh};
        run_local(3, |node| {
            let me = node.mynode();
            let mesh = Mesh::new(&[4, 2], &[Boundary::Periodic, Boundary::Closed], 3).unwrap();
            let mut partners = Vec::new();
            for axis in 0..2 {
                for n in [mesh.successor(me, axis), mesh.predecessor(me, axis)] {
                    if let Some(n) = n.unwrap() {
                        partners.push((n, Bytes::from(vec![me as u8; 8 << 20])));
                    }
                }
            }
            let got = node.cube().exchange_with(&partners).unwrap();
            for ((n, _), g) in partners.iter().zip(&got) {
                assert!(g.len() == 8 << 20 && g.iter().all(|&b| u32::from(b) == *n));
            }
            // A partner outside the subcube, or this node itself: refused before any send.
            let pair = node.subcube(1);
            assert!(matches!(
                pair.exchange_with(&[(me ^ 2, Bytes::new())]),
                Err(Error::InvalidNode { .. })
            ));
            assert!(matches!(
                pair.exchange_with(&[(me, Bytes::new())]),
                Err(Error::InvalidNode { .. })
            ));
        });
    }

    /// Partners at the antipode (3 links apart) and a neighbour, along planned routes and
    /// along e-cube: the same blocks.
    #[test]
    fn exchange_with_far_partners_along_planned_routes() {
        run_local(3, |node| {
            let me = node.mynode();
            let partners = [
                (me ^ 7, Bytes::from(vec![me as u8; 5000 + me as usize])),
                (me ^ 1, Bytes::from(vec![me as u8 + 100; 300])),
            ];
            let want: Vec<Bytes> = partners
                .iter()
                .map(|&(n, _)| match n == me ^ 7 {
                    true => Bytes::from(vec![n as u8; 5000 + n as usize]),
                    false => Bytes::from(vec![n as u8 + 100; 300]),
                })
                .collect();
            for alg in [Algorithm::Auto, Algorithm::Planned] {
                let got = node.cube().with(alg).exchange_with(&partners).unwrap();
                assert_eq!(got, want, "{alg:?}");
            }
        });
    }

    #[test]
    fn bad_arguments_and_type_mismatch() {
        run_local(1, |node| {
            let cube = node.cube();
            assert!(matches!(
                cube.exchange(1, Bytes::new()),
                Err(Error::InvalidArgument(_))
            ));
            assert!(matches!(
                cube.exchange_neighbours(&[]),
                Err(Error::InvalidArgument(_))
            ));
            // Same size, another type: detected by the fingerprint.
            let r = if node.mynode() == 0 {
                cube.exchange_value(0, &1u64).map(|_| ())
            } else {
                cube.exchange_value(0, &1.5f64).map(|_| ())
            };
            match r {
                Err(Error::TypeMismatch {
                    source_node,
                    expected,
                    ..
                }) => {
                    assert_eq!(source_node, node.mynode() ^ 1);
                    assert!(expected == "u64" || expected == "f64");
                }
                other => panic!("{other:?}"),
            }
            // The collective serde forms too.
            let r = if node.mynode() == 0 {
                cube.allgather_value(&7u64).map(|_| ())
            } else {
                cube.allgather_value(&7.0f64).map(|_| ())
            };
            let e = r.unwrap_err().to_string();
            assert!(e.contains("type mismatch") && e.contains("node"), "{e}");
        });
    }
}
