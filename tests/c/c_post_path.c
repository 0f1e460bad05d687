/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The reference post path written in C with rdma-core's own inline functions: what a C
 * program posting a DC send or an RC write does. Benchmarks compare the Rust paths with these.
 */
#include "m5dv_shim.h"

int m5dv_c_dc_send(struct ibv_qp_ex *qpx, struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
		   uint32_t dctn, uint64_t dc_key, uint32_t lkey, uint64_t addr, uint32_t length,
		   uint64_t wr_id)
{
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	mlx5dv_wr_set_dc_addr(mqp, ah, dctn, dc_key);
	ibv_wr_set_sge(qpx, lkey, addr, length);
	return ibv_wr_complete(qpx);
}

int m5dv_c_rc_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint32_t lkey,
		    uint64_t addr, uint32_t length, uint64_t wr_id)
{
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, rkey, remote_addr);
	ibv_wr_set_sge(qpx, lkey, addr, length);
	return ibv_wr_complete(qpx);
}

/*
 * n DC sends as a C program's loop posts them (wr_ids wr_id .. wr_id + n - 1): the strictest
 * reference, with no call per request. Returns 0, or the first failure of ibv_wr_complete.
 */
int m5dv_c_dc_send_loop(struct ibv_qp_ex *qpx, struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
			uint32_t dctn, uint64_t dc_key, uint32_t lkey, uint64_t addr, uint32_t length,
			uint64_t wr_id, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int rc;

		ibv_wr_start(qpx);
		qpx->wr_id = wr_id + i;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		mlx5dv_wr_set_dc_addr(mqp, ah, dctn, dc_key);
		ibv_wr_set_sge(qpx, lkey, addr, length);
		rc = ibv_wr_complete(qpx);
		if (rc)
			return rc;
	}
	return 0;
}
