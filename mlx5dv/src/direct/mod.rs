//! The direct backend: DC and RC work requests written straight into the send queue, and the
//! doorbell rung by the crate, byte for byte as libmlx5's wr API writes them; their
//! completions read straight from a CQ that only direct QPs use (`cq_ring`; decoded into
//! completions by the CQ module, which uses this one, never the other way).
//!
//! A queue pair chooses its backend at creation ([`SendBackend`]); the typestate batch
//! ([`crate::Batch`]) is the same for both. On a direct QP the crate's send-queue state replaces
//! libmlx5's (the two never drive one QP): the ring position (`cur_post`), the BlueFlame
//! offset, and the room left in 64-byte basic blocks. What libmlx5's wr API does, and this
//! module does the same way (rdma-core `providers/mlx5/qp.c`, 44 to 59):
//! - a request starts at basic block `cur_post & (wqe_cnt - 1)`: the control segment (WQE
//!   index and opcode; QP number and size in 16-byte units; stream id; fence, completion and
//!   solicited flags; immediate data for the `_IMM` opcodes, left as it was otherwise), then
//!   the 48-byte address vector copied from the AH with the DCT number, `MLX5_EXTENDED_UD_AV`
//!   and the DC key; the segments after it start in the next basic block, which is the
//!   ring's first when the request started in its last. An RC request has no address vector
//!   (nor any datagram segment): its segments follow the control segment in its block. The
//!   address vector is the only difference between the two for these opcodes;
//! - then the remote address (RDMA, atomics), the atomic operands (compare left as it was for
//!   fetch-and-add), and the data: one data segment per non-empty SGE (wrapping to the ring's
//!   start where it ends), or an inline segment whose bytes wrap the same way;
//! - `cur_post` moves by the request's basic blocks; at commit, after a store barrier, the
//!   doorbell record takes `cur_post`, then the last request's first 64-byte blocks are copied
//!   to the BlueFlame register (one request of more than 16 bytes that fits it) or its first 8
//!   bytes are written to it, the write-combining buffer is flushed, and the BlueFlame offset
//!   toggles;
//! - a RESET restarts `cur_post` at 0 (libmlx5's `mlx5_init_qp_indices`).
//!
//! Admission: a request is admitted when the crate's count of outstanding requests allows it
//! ([`crate::sq_accounting`]) and the ring has room for its basic blocks past the last retired request's
//! (a DC request spans 1 to several blocks), so an unretired WQE is never overwritten.
//!
//! The BlueFlame register: libmlx5 serialises a register several of its QPs share with a lock
//! the direct writer cannot take, so each direct QP is created on a thread domain of its own and
//! gets a register nobody else writes (`register`); without one, no direct QP.
//!
//! What libmlx5 does for its own QPs and the crate does for direct ones: cleaning the CQ of a
//! QP's completions at RESET and destroy (`cq_ring`); the WQE signature when the QP was created
//! with signatures (`MLX5_QP_SIGNATURE`); rdma-core's barriers (`barrier`: x86_64 and aarch64
//! only; refused elsewhere).

pub(crate) mod barrier;
pub(crate) mod cq_ring;
pub(crate) mod probe;
pub(crate) mod register;
mod wqe_writer;

pub(crate) use wqe_writer::DirectSq;

/// How a queue pair posts its work requests.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SendBackend {
    /// libmlx5's wr API (`ibv_wr_*`, `mlx5dv_wr_set_dc_addr`): the default.
    #[default]
    WrApi,
    /// The crate writes the WQEs and rings the doorbell itself (DC initiators, RC queue pairs):
    /// its send CQ must be a direct one (`Context::create_direct_cq`), whose completions the
    /// crate reads itself; an RC QP's receives go to an ordinary CQ
    /// (`Pd::create_rc_qp_split`).
    ///
    /// What it requires and costs:
    /// - x86_64 or aarch64, where it has rdma-core's barriers; elsewhere a direct CQ or QP is
    ///   refused with EOPNOTSUPP.
    /// - A BlueFlame register of the QP's own: each direct QP is created on a thread domain and
    ///   parent domain of its own (`ibv_alloc_td`, `ibv_alloc_parent_domain`, as UCX does for
    ///   its DCIs), which libmlx5 serves from a dynamic UAR: one BlueFlame register per QP out of
    ///   the context's dynamic ones (mlx5_ib offers 1024 per context). Where the provider gives
    ///   no thread domain (none left, or none supported), building a direct QP fails with
    ///   `ibv_alloc_td`'s errno: the register libmlx5 would give instead may be one its own QPs
    ///   write BlueFlame copies into under a lock the crate cannot take, and even an 8-byte
    ///   doorbell store outside that lock can land inside such a copy. Build those QPs on the
    ///   wr API.
    /// - A QP is posted to from one thread at a time (it is `Send`, not `Sync`), and its direct
    ///   CQ is read under a lock of the crate's, taken once per poll; a QP's RESET or destroy
    ///   takes it too, to clean the QP's completions out (as libmlx5 cleans its own CQs).
    /// - `MLX5_QP_SIGNATURE` set in the environment makes libmlx5 create every QP with WQE
    ///   signatures, which the writer then computes for each WQE as libmlx5 does.
    Direct,
}
