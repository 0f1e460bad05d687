//! Host memory libmlx5 allocates for a queue pair or SRQ, read back from the provider with
//! `mlx5dv_init_obj` (shared by the dc_scale and dc_fanout examples; see dc_scale's module
//! comment for the sizing rules and their sources in rdma-core).
#![allow(dead_code)] // each example uses part of it
use mlx5dv::raw;

const PAGE: u64 = 4096;
/// One doorbell record: a cache line of a shared page (providers/mlx5/dbrec.c).
const DBREC: u64 = 64;

fn page_round(n: u64) -> u64 {
    n.div_ceil(PAGE) * PAGE
}

/// Host memory libmlx5 allocated for the queue pair `qp` (see the module comment).
pub fn qp_bytes(qp: *mut raw::ibv_qp) -> Result<u64, String> {
    // SAFETY: mlx5dv_qp is plain data; all-zero is a valid value.
    let mut out: raw::mlx5dv_qp = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
    obj.qp.r#in = qp;
    obj.qp.out = &mut out;
    // SAFETY: `qp` is a live mlx5 QP; `obj` names one output that outlives the call.
    let rc = unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_QP) };
    if rc != 0 {
        return Err(format!("mlx5dv_init_obj (QP): errno {rc}"));
    }
    let (sq, rq) = (u64::from(out.sq.wqe_cnt), u64::from(out.rq.wqe_cnt));
    let rings = sq * u64::from(out.sq.stride) + rq * u64::from(out.rq.stride);
    Ok(page_round(rings) + sq * (8 + 4 + 4) + rq * 8 + DBREC)
}

/// Host memory libmlx5 allocated for the SRQ `srq`.
pub fn srq_bytes(srq: *mut raw::ibv_srq) -> Result<u64, String> {
    // SAFETY: plain data; all-zero is valid.
    let mut out: raw::mlx5dv_srq = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
    obj.srq.r#in = srq;
    obj.srq.out = &mut out;
    // SAFETY: `srq` is a live mlx5 SRQ; `obj` names one output that outlives the call.
    let rc = unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_SRQ) };
    if rc != 0 {
        return Err(format!("mlx5dv_init_obj (SRQ): errno {rc}"));
    }
    let wqes = u64::from(out.tail) + 1;
    Ok(page_round(wqes * u64::from(out.stride)) + wqes * 8 + DBREC)
}
