//! The direct backend: DC and RC work requests written straight into the send queue, and the
//! doorbell rung by the crate, byte for byte as libmlx5's wr API writes them; their
//! completions read straight from a CQ that only direct QPs use (`cq_ring`, `cqe`).
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
//! ([`crate::sq`]) and the ring has room for its basic blocks past the last retired request's
//! (a DC request spans 1 to several blocks), so an unretired WQE is never overwritten.
//!
//! Known limit: libmlx5 serialises a BlueFlame register that several QPs share (`need_lock`,
//! medium-latency bfregs) with a lock the direct writer cannot take; `mlx5dv_init_obj` does not
//! say whether the register is shared. The direct writer keeps its own offset, as UCX does.

mod barrier;
pub(crate) mod cq_ring;
pub(crate) mod cqe;
pub(crate) mod probe;
mod sq;

pub(crate) use sq::DirectSq;

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
    Direct,
}
