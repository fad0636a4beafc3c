//! Global commutative operations, GOP (seed §3 and the GOP listing).
//!
//! Every member of the root's subcube calls GOP with a vector of the same length; the
//! vectors are combined element-wise up the spanning tree of the broadcast (§2) run
//! backwards: with `diff = me XOR root`, a node's parent is `me XOR highbit(diff)` and its
//! children are `me XOR b` for every link `b` above `highbit(diff)` (all links at the root).
//! A node combines its children's contributions in descending link order — the listing's
//! order, fixed so that floating-point results are reproducible — and sends the result to
//! its parent.
//!
//! On return the root's vector holds the result over the whole subcube; every other node's
//! vector holds the partial result over its own subtree (the seed's output semantics).
//!
//! Where the links are slow a long vector goes up in pieces (`pieces.rs`): a node sends
//! piece i to its parent once every child's piece i is combined in, so the levels of the
//! tree overlap; each element is still combined in the same order, so the results are
//! those of the seed's one-message GOP.

use hypercube_topology::NodeId;

use super::checks::{check_dim, check_node, high_bit};
use super::pieces;
use crate::collectives::element::encode;
use crate::collectives::Pod;
use crate::error::{Error, Result};
use crate::node::{Node, RecvRequest, SendRequest};

pub use crate::collectives::Element;

/// The seed's four GOP operations (§3). For any other associative and commutative
/// operation use [`Node::gop_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `'+'`: the sum.
    Sum,
    /// `'*'`: the product (the name of [`crate::collectives::Op::Prod`]; `Op::Product`
    /// remains as a deprecated alias).
    Prod,
    /// `'M'`: the maximum.
    Max,
    /// `'m'`: the minimum.
    Min,
}

#[allow(non_upper_case_globals)]
impl Op {
    /// The old name of [`Op::Prod`] (the collectives' name for the product).
    #[deprecated(note = "use Op::Prod, the name hypercube::collectives::Op uses too")]
    pub const Product: Op = Op::Prod;

    /// The seed's operation character: `'+'`, `'*'`, `'M'` or `'m'`.
    pub fn from_seed_char(c: char) -> Option<Op> {
        match c {
            '+' => Some(Op::Sum),
            '*' => Some(Op::Prod),
            'M' => Some(Op::Max),
            'm' => Some(Op::Min),
            _ => None,
        }
    }

    /// Combine two elements.
    pub fn apply<T: Element>(self, a: T, b: T) -> T {
        match self {
            Op::Sum => T::sum(a, b),
            Op::Prod => T::prod(a, b),
            Op::Max => T::max_of(a, b),
            Op::Min => T::min_of(a, b),
        }
    }
}

impl Node {
    /// Combine `x` element-wise with the vectors of every other node of the root's subcube
    /// of dimension `dim` (seed §3, GOP with `OP` = `'+'`, `'*'`, `'M'` or `'m'`).
    ///
    /// On return, at `root` `x` holds the result; at every other node it holds the partial
    /// result over its subtree of the spanning tree. Every member of the subcube must call
    /// `gop` with the same `root`, `dim` and vector length.
    ///
    /// `op` is the seed's [`Op`] or any commutative operator of the collectives
    /// ([`crate::collectives::Op`]), over any plain-data element ([`Pod`]): `MaxLoc` over
    /// [`crate::collectives::Loc`], the bitwise ones over integers, `Commutative(&f)` over a
    /// struct of your own.
    ///
    /// ```no_run
    /// use hypercube::ipsc::Op;
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?;
    /// let mut x = [node.mynode() as f64, 1.0];
    /// node.gop(&mut x, Op::Sum, 0, node.cubedim())?;
    /// if node.mynode() == 0 {
    ///     let p = node.numnodes() as f64;
    ///     assert_eq!(x, [p * (p - 1.0) / 2.0, p]);
    /// }
    /// // MAXLOC: the largest value and the node that holds it.
    /// use hypercube::collectives::{Loc, Op as COp};
    /// let mut best = [Loc::new((node.mynode() % 3) as f64, u64::from(node.mynode()))];
    /// node.gop(&mut best, COp::MaxLoc, 0, node.cubedim())?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// - [`Error::GopNonParticipant`] (`GOP: CALLED BY NON PARTICIPANT`) when this node is
    ///   not in the `dim`-subcube of `root`; nothing was sent.
    /// - [`Error::GopLongMessage`] / [`Error::GopShortMessage`] (`GOP: LONG MESSAGE`,
    ///   `GOP: SHORT MESSAGE`) when a child's vector had another length; the call still
    ///   completed (combining the overlapping elements) so that no other node hangs.
    /// - [`Error::IpscArgument`] / [`Error::InvalidNode`] for a `dim` or `root` outside
    ///   the cube, a named operator `T` lacks (`BAnd` over `f64`) or a non-commutative
    ///   `Op::Fn` (GOP groups terms in the spanning tree's order; pass `Op::Commutative`);
    ///   nothing was sent.
    #[doc(alias = "GOP")]
    pub fn gop<'a, T: Pod>(
        &self,
        x: &mut [T],
        op: impl Into<crate::collectives::Op<'a, T>>,
        root: NodeId,
        dim: u32,
    ) -> Result<()> {
        let op = op.into();
        op.check().map_err(|e| Error::IpscArgument {
            routine: "GOP",
            detail: match e {
                Error::InvalidArgument(m) => m,
                other => other.to_string(),
            },
        })?;
        if !op.is_commutative() {
            return Err(Error::IpscArgument {
                routine: "GOP",
                detail: "Op::Fn is an operator that may not commute, but GOP combines in the \
                         spanning tree's order: pass Op::Commutative(&f) if f commutes, or use \
                         the collectives' reduce, which keeps rank order"
                    .into(),
            });
        }
        self.gop_with(x, |a, b| op.apply(a, b), root, dim)
    }

    /// [`Node::gop`] with a caller's operation `f(mine, theirs)`, which must be associative
    /// and commutative (the tree decides the grouping), over any plain-data element. Seed
    /// §3: "it is easy to modify the source code to include other operations".
    ///
    /// ```no_run
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?;
    /// let mut bits = [1u64 << node.mynode()];
    /// node.gop_with(&mut bits, |a, b| a | b, 0, node.cubedim())?; // bitwise OR
    /// # Ok(()) }
    /// ```
    #[doc(alias = "GOP")]
    pub fn gop_with<T, F>(&self, x: &mut [T], f: F, root: NodeId, dim: u32) -> Result<()>
    where
        T: Pod,
        F: Fn(T, T) -> T,
    {
        self.gop_in(x, f, root, dim, None)
    }

    /// [`Node::gop_with`] sending this node's vector in pieces of `piece` bytes (`None`:
    /// as `pieces.rs` chooses for the links).
    pub(super) fn gop_in<T, F>(
        &self,
        x: &mut [T],
        f: F,
        root: NodeId,
        dim: u32,
        piece: Option<usize>,
    ) -> Result<()>
    where
        T: Pod,
        F: Fn(T, T) -> T,
    {
        check_dim(self, "GOP", dim)?;
        check_node(self, "GOP root", root)?;
        let me = self.mynode();
        let diff = me ^ root;
        if u64::from(diff) >> dim != 0 {
            return Err(Error::GopNonParticipant { me, root, dim });
        }
        let tag = self.collective_tag(dim);
        let _call =
            crate::trace::Call::utility("GOP", me, dim, Some(root), std::mem::size_of_val(x));
        let size = T::WIRE_SIZE.max(1);
        // Children: links above highbit(diff), largest first (the listing's order).
        let lowest_child_link = if diff == 0 { 1 } else { high_bit(diff) << 1 };
        let mut children: Vec<Child> = Vec::new();
        let mut link = if dim == 0 { 0u64 } else { 1u64 << (dim - 1) };
        while link >= u64::from(lowest_child_link) {
            children.push(Child::new(self, me ^ link as u32, tag)?);
            link >>= 1;
        }
        // This node's vector goes up in pieces (one, but where the links are slow:
        // `pieces.rs`); piece i is sent once every child's elements of it are combined in,
        // so the tree's levels overlap. Each element is combined with the children's in
        // descending link order, piece or not: the seed's order.
        let total = std::mem::size_of_val(x);
        let piece = pieces::piece_len(total, dim, size, piece);
        let mut sends: Vec<SendRequest> = Vec::new();
        let mut mismatch: Option<Error> = None;
        for (k, (start, end)) in pieces::ranges(total, piece).enumerate() {
            for child in &mut children {
                child.take_until(self, tag, end / size, x, &f, &mut mismatch)?;
            }
            if diff != 0 {
                let parent = me ^ high_bit(diff);
                let data = encode(&x[start / size..end / size]);
                let parts = pieces::frame(k, (total, piece), data);
                sends.push(self.isend_internal(parent, tag, parts)?);
            }
        }
        // What a child with a longer vector still sends (the seed's LONG MESSAGE): taken,
        // so that it finishes.
        for child in &mut children {
            child.take_until(self, tag, usize::MAX, x, &f, &mut mismatch)?;
        }
        sends.into_iter().try_for_each(SendRequest::wait)?;
        match mismatch {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// What a GOP node has received from one child: the length of the child's vector (from its
/// first piece's prefix) and how many of its elements came.
struct Child {
    node: NodeId,
    /// Elements of the child's vector, once its first piece came.
    total: Option<usize>,
    /// Elements received (and combined, as far as this node's vector reaches).
    got: usize,
    /// The receive of its next piece, posted as soon as one is due: every child's pieces
    /// come in at once, over their own links, while this node waits for or combines
    /// another's.
    next: Option<RecvRequest>,
}

impl Child {
    fn new(node: &Node, child: NodeId, tag: u32) -> Result<Child> {
        Ok(Child {
            node: child,
            total: None,
            got: 0,
            next: Some(node.irecv_internal(Some(child), tag)?),
        })
    }

    /// Receive this child's pieces until its elements up to `upto` (or all it has) are
    /// combined into `x` with `f` (`f(mine, theirs)`); a first piece whose vector has
    /// another length than `x` sets `mismatch` (once).
    fn take_until<T: Pod>(
        &mut self,
        node: &Node,
        tag: u32,
        upto: usize,
        x: &mut [T],
        f: &impl Fn(T, T) -> T,
        mismatch: &mut Option<Error>,
    ) -> Result<()> {
        let size = T::WIRE_SIZE.max(1);
        while self.total.map_or(true, |t| self.got < t.min(upto)) {
            let m = match self.next.take() {
                Some(r) => r.wait()?,
                None => node.recv_internal(Some(self.node), tag)?,
            };
            let mut data = m.into_data();
            if self.total.is_none() {
                let (total, _, rest) = pieces::split_prefix(&data, "GOP", self.node)?;
                let received = total / size;
                if total != x.len() * size && mismatch.is_none() {
                    *mismatch = Some(if total > x.len() * size {
                        Error::GopLongMessage {
                            from: self.node,
                            expected: x.len(),
                            received,
                        }
                    } else {
                        Error::GopShortMessage {
                            from: self.node,
                            expected: x.len(),
                            received,
                        }
                    });
                }
                self.total = Some(received);
                data = rest;
            } else if data.is_empty() {
                return Err(Error::Protocol {
                    peer: self.node,
                    detail: format!(
                        "an empty GOP piece after {} of {} elements",
                        self.got,
                        self.total.unwrap_or(0)
                    ),
                });
            }
            let got = self.got + data.len() / size;
            if self.total.is_some_and(|t| got < t) {
                self.next = Some(node.irecv_internal(Some(self.node), tag)?);
            }
            let mine = x.get_mut(self.got..).unwrap_or_default();
            for (xi, chunk) in mine.iter_mut().zip(data.chunks_exact(size)) {
                *xi = f(*xi, T::read_wire(chunk));
            }
            self.got = got;
        }
        Ok(())
    }
}

/// GOP's operations into the collectives' operator (here, above both: the collectives do
/// not import the iPSC layer): `Sum → Sum`, `Prod` (`'*'`, once `Product`) `→ Prod`,
/// `Max → Max`, `Min → Min`.
impl<T> From<Op> for crate::collectives::Op<'_, T> {
    fn from(op: Op) -> Self {
        use crate::collectives::Op as C;
        match op {
            Op::Sum => C::Sum,
            Op::Prod => C::Prod,
            Op::Max => C::Max,
            Op::Min => C::Min,
        }
    }
}

impl<T> crate::collectives::Op<'_, T> {
    /// The seed's GOP operation character: `'+'`, `'*'`, `'M'` or `'m'` (as
    /// [`Op::from_seed_char`], converted).
    pub fn from_seed_char(c: char) -> Option<Self> {
        Op::from_seed_char(c).map(Into::into)
    }
}
