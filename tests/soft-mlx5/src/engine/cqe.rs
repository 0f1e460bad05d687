//! 64-byte CQEs (struct mlx5_cqe64 / mlx5_err_cqe in mlx5dv.h), CQE format version 1: the
//! resource is named by its user index in `srqn_uidx`, ownership by the owner bit written last.

/// mlx5_cqe64 opcodes (op_own >> 4).
pub mod op {
    /// Requester completion.
    pub const REQ: u8 = 0;
    /// Responder: RDMA write with immediate.
    pub const RESP_WR_IMM: u8 = 1;
    /// Responder: send.
    pub const RESP_SEND: u8 = 2;
    /// Responder: send with immediate.
    pub const RESP_SEND_IMM: u8 = 3;
    /// Responder: send with invalidate (libmlx5: IBV_WC_RECV with IBV_WC_WITH_INV, the
    /// invalidated key in `imm_inval_pkey`).
    pub const RESP_SEND_INV: u8 = 4;
    /// MLX5_CQE_RESIZE_CQ: the last CQE of the old ring after a resize.
    pub const RESIZE_CQ: u8 = 5;
    /// Requester error.
    pub const REQ_ERR: u8 = 13;
    /// Responder error.
    pub const RESP_ERR: u8 = 14;
}

/// MLX5_CQE_SYNDROME_* error syndromes.
pub mod syndrome {
    /// Local length error.
    pub const LOCAL_LENGTH_ERR: u8 = 0x01;
    /// Local QP operation error.
    pub const LOCAL_QP_OP_ERR: u8 = 0x02;
    /// Local protection error.
    pub const LOCAL_PROT_ERR: u8 = 0x04;
    /// Work request flushed.
    pub const WR_FLUSH_ERR: u8 = 0x05;
    /// Memory window bind error.
    pub const MW_BIND_ERR: u8 = 0x06;
    /// Remote invalid request.
    pub const REMOTE_INVAL_REQ_ERR: u8 = 0x12;
    /// Remote access error.
    pub const REMOTE_ACCESS_ERR: u8 = 0x13;
    /// Remote operation error.
    pub const REMOTE_OP_ERR: u8 = 0x14;
    /// Transport retry counter exceeded.
    pub const TRANSPORT_RETRY_EXC_ERR: u8 = 0x15;
    /// RNR retry counter exceeded.
    pub const RNR_RETRY_EXC_ERR: u8 = 0x16;
}

/// What one CQE says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cqe {
    /// op_own high nibble.
    pub opcode: u8,
    /// User index of the QP/DCT (or SRQ).
    pub uidx: u32,
    /// QP number (sop_drop_qpn low 24 bits).
    pub qpn: u32,
    /// The WQE's MLX5_OPCODE_* (requester; sop_drop_qpn high byte).
    pub wqe_opcode: u8,
    /// wqe_counter.
    pub wqe_counter: u16,
    /// byte_cnt.
    pub byte_cnt: u32,
    /// imm_inval_pkey (immediate as it travelled, big-endian on the wire).
    pub imm: u32,
    /// Source QP (flags_rqpn low 24 bits).
    pub src_qp: u32,
    /// GRH present (flags_rqpn bits 28-29 = 2 for a GRH).
    pub grh: bool,
    /// Source LID.
    pub slid: u16,
    /// Error syndrome (error CQEs).
    pub syndrome: u8,
    /// Vendor syndrome (error CQEs).
    pub vendor_err: u8,
}

impl Cqe {
    /// The 64 bytes, owner bit clear (the caller sets it).
    pub fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        match self.opcode {
            op::REQ_ERR | op::RESP_ERR => {
                // struct mlx5_err_cqe: srqn 32 (mlx5_cqe64.srqn_uidx: the user index),
                // vendor_err_synd 54, syndrome 55, s_wqe_opcode_qpn 56, wqe_counter 60.
                b[32..36].copy_from_slice(&self.uidx.to_be_bytes());
                b[54] = self.vendor_err;
                b[55] = self.syndrome;
                let s = (u32::from(self.wqe_opcode) << 24) | (self.qpn & 0xff_ffff);
                b[56..60].copy_from_slice(&s.to_be_bytes());
            }
            _ => {
                b[22..24].copy_from_slice(&self.slid.to_be_bytes());
                let g: u32 = if self.grh { 2 } else { 0 };
                let flags_rqpn = (g << 28) | (self.src_qp & 0xff_ffff);
                b[24..28].copy_from_slice(&flags_rqpn.to_be_bytes());
                b[32..36].copy_from_slice(&self.uidx.to_be_bytes());
                b[36..40].copy_from_slice(&self.imm.to_be_bytes());
                b[44..48].copy_from_slice(&self.byte_cnt.to_be_bytes());
                let s = (u32::from(self.wqe_opcode) << 24) | (self.qpn & 0xff_ffff);
                b[56..60].copy_from_slice(&s.to_be_bytes());
            }
        }
        b[60..62].copy_from_slice(&self.wqe_counter.to_be_bytes());
        b[63] = self.opcode << 4;
        b
    }
}

/// Field offsets of struct mlx5_cqe64, for the layout test.
pub const CQE64_OFFSETS: &[(&str, usize)] = &[
    ("slid", 22),
    ("flags_rqpn", 24),
    ("srqn_uidx", 32),
    ("imm_inval_pkey", 36),
    ("byte_cnt", 44),
    ("sop_drop_qpn", 56),
    ("wqe_counter", 60),
    ("signature", 62),
    ("op_own", 63),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requester_cqe_carries_opcode_qpn_and_counter_where_libmlx5_reads_them() {
        let c = Cqe {
            opcode: op::REQ,
            uidx: 7,
            qpn: 0x123,
            wqe_opcode: 0x10,
            wqe_counter: 0x1234,
            byte_cnt: 99,
            ..Default::default()
        };
        let b = c.encode();
        assert_eq!(b[63] >> 4, op::REQ);
        assert_eq!(u32::from_be_bytes(b[56..60].try_into().unwrap()), 0x1000_0123);
        assert_eq!(u16::from_be_bytes([b[60], b[61]]), 0x1234);
        assert_eq!(u32::from_be_bytes(b[32..36].try_into().unwrap()), 7);
        assert_eq!(u32::from_be_bytes(b[44..48].try_into().unwrap()), 99);
    }

    #[test]
    fn error_cqe_places_syndrome_and_uidx_as_mlx5_err_cqe() {
        let c = Cqe {
            opcode: op::REQ_ERR,
            uidx: 5,
            qpn: 9,
            syndrome: syndrome::REMOTE_ACCESS_ERR,
            vendor_err: 0x88,
            wqe_counter: 3,
            ..Default::default()
        };
        let b = c.encode();
        assert_eq!((b[55], b[54], b[63] >> 4), (0x13, 0x88, op::REQ_ERR));
        assert_eq!(u32::from_be_bytes(b[32..36].try_into().unwrap()), 5);
    }
}
