//! `<rdma/rdma_user_ioctl_cmds.h>`, `<rdma/ib_user_ioctl_cmds.h>`, `<rdma/mlx5_user_ioctl_cmds.h>`,
//! `<rdma/ib_user_ioctl_verbs.h>`, `<rdma/mlx5_user_ioctl_verbs.h>`: the RDMA_VERBS_IOCTL ABI.
//!
//! In that order. Object, method and attribute ids are `u16` (as in `ib_uverbs_ioctl_hdr` and
//! `ib_uverbs_attr`); driver ids start at `1 << UVERBS_ID_NS_SHIFT`. Anonymous C members are named
//! here: the second union of `ib_uverbs_attr` is `data_data_s64` (after its members), the named
//! union `attr_data` and its struct `enum_data` get types `ib_uverbs_attr_attr_data[_enum_data]`.
//! Flexible array members (`attrs[]`, `out_data[]`) are left out, and so is
//! `ib_uverbs_flow_action_esp_encap` (tail padding: not plain old data for [`super::Pod`]).

// ---- rdma_user_ioctl_cmds.h ----------------------------------------------------------------------

/// RDMA_IOCTL_MAGIC: the ioctl type byte of the RDMA subsystem.
pub const RDMA_IOCTL_MAGIC: u32 = 0x1b;
/// RDMA_VERBS_IOCTL: `_IOWR(RDMA_IOCTL_MAGIC, 1, struct ib_uverbs_ioctl_hdr)` (asm-generic encoding).
pub const RDMA_VERBS_IOCTL: u64 =
    (3 << 30) | ((core::mem::size_of::<ib_uverbs_ioctl_hdr>() as u64) << 16) | ((RDMA_IOCTL_MAGIC as u64) << 8) | 1;

/// UVERBS_ATTR_F_MANDATORY: `ib_uverbs_attr.flags`: the kernel must understand this attribute.
pub const UVERBS_ATTR_F_MANDATORY: u16 = 1 << 0;
/// UVERBS_ATTR_F_VALID_OUTPUT: `ib_uverbs_attr.flags`: set by the kernel when it wrote the output.
pub const UVERBS_ATTR_F_VALID_OUTPUT: u16 = 1 << 1;

/// struct ib_uverbs_attr (rdma_user_ioctl_cmds.h): one attribute of an RDMA_VERBS_IOCTL call.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_attr {
    /// Attribute id (method specific).
    pub attr_id: u16,
    /// Length of the pointed-to data (pointers and IDR arrays).
    pub len: u16,
    /// UVERBS_ATTR_F_*.
    pub flags: u16,
    /// Enum attributes: the element id.
    pub attr_data: ib_uverbs_attr_attr_data,
    /// C's anonymous `union { data; data_s64; }`.
    pub data_data_s64: ib_uverbs_attr_data_data_s64,
}

impl ib_uverbs_attr {
    /// C's `data` (a member of the anonymous union; write it through `data_data_s64.data`).
    pub fn data(&self) -> u64 {
        // SAFETY: both union members are 8 bytes at offset 0; every bit pattern is a valid u64.
        unsafe { self.data_data_s64.data }
    }

    /// C's `data_s64` (a member of the anonymous union): the fd of FD_IN / FD_OUT attributes.
    pub fn data_s64(&self) -> i64 {
        // SAFETY: both union members are 8 bytes at offset 0; every bit pattern is a valid i64.
        unsafe { self.data_data_s64.data_s64 }
    }

    /// C's `attr_data.enum_data.elem_id`.
    pub fn elem_id(&self) -> u8 {
        // SAFETY: both union members are 2 plain bytes at offset 0; every bit pattern is valid.
        unsafe { self.attr_data.enum_data.elem_id }
    }
}

/// The `union { ... } attr_data` of struct ib_uverbs_attr (named here).
#[repr(C)]
#[derive(Clone, Copy)]
pub union ib_uverbs_attr_attr_data {
    /// Enum attributes.
    pub enum_data: ib_uverbs_attr_attr_data_enum_data,
    /// Reserved.
    pub reserved: u16,
}

impl Default for ib_uverbs_attr_attr_data {
    fn default() -> Self {
        Self { reserved: 0 }
    }
}

impl core::fmt::Debug for ib_uverbs_attr_attr_data {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: both members are two plain bytes at offset 0; every bit pattern is valid.
        let enum_data = unsafe { self.enum_data };
        f.debug_struct("attr_data").field("enum_data", &enum_data).finish()
    }
}

/// The `struct { ... } enum_data` of `ib_uverbs_attr.attr_data` (named here).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_attr_attr_data_enum_data {
    /// Which element of the enum attribute.
    pub elem_id: u8,
    /// Reserved.
    pub reserved: u8,
}

/// The anonymous second union of struct ib_uverbs_attr (named here after its members).
#[repr(C)]
#[derive(Clone, Copy)]
pub union ib_uverbs_attr_data_data_s64 {
    /// Pointer to the data, inline data (len <= 8), or an object handle.
    pub data: u64,
    /// FD_IN / FD_OUT attributes: the fd.
    pub data_s64: i64,
}

impl Default for ib_uverbs_attr_data_data_s64 {
    fn default() -> Self {
        Self { data: 0 }
    }
}

impl core::fmt::Debug for ib_uverbs_attr_data_data_s64 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: both members are 8 plain bytes at offset 0; every bit pattern is a valid u64.
        let data = unsafe { self.data };
        f.debug_struct("data_data_s64").field("data", &data).finish()
    }
}

/// struct ib_uverbs_ioctl_hdr (rdma_user_ioctl_cmds.h); `struct ib_uverbs_attr attrs[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ioctl_hdr {
    /// Length of the header plus the attributes.
    pub length: u16,
    /// Object id.
    pub object_id: u16,
    /// Method id.
    pub method_id: u16,
    /// Number of attributes that follow.
    pub num_attrs: u16,
    /// Reserved.
    pub reserved1: u64,
    /// enum rdma_driver_id.
    pub driver_id: u32,
    /// Reserved.
    pub reserved2: u32,
}

// ---- ib_user_ioctl_cmds.h ------------------------------------------------------------------------

/// UVERBS_ID_NS_MASK: the namespace bits of an object/method/attribute id.
pub const UVERBS_ID_NS_MASK: u16 = 0xF000;
/// UVERBS_ID_NS_SHIFT: shift of the namespace bits.
pub const UVERBS_ID_NS_SHIFT: u32 = 12;
/// UVERBS_API_NS_FLAG: the driver namespace flag, first id of every mlx5 enum below (kernel
/// `include/rdma/uverbs_ioctl.h`, not uapi: proven through those enums).
pub const UVERBS_API_NS_FLAG: u16 = 1 << UVERBS_ID_NS_SHIFT;

/// UVERBS_UDATA_DRIVER_DATA_NS: the driver namespace number.
pub const UVERBS_UDATA_DRIVER_DATA_NS: u16 = 1;
/// UVERBS_UDATA_DRIVER_DATA_FLAG: the driver namespace bit of an id.
pub const UVERBS_UDATA_DRIVER_DATA_FLAG: u16 = 1 << UVERBS_ID_NS_SHIFT;

/// enum uverbs_default_objects: UVERBS_OBJECT_DEVICE.
pub const UVERBS_OBJECT_DEVICE: u16 = 0;
/// enum uverbs_default_objects: UVERBS_OBJECT_PD.
pub const UVERBS_OBJECT_PD: u16 = 1;
/// enum uverbs_default_objects: UVERBS_OBJECT_COMP_CHANNEL.
pub const UVERBS_OBJECT_COMP_CHANNEL: u16 = 2;
/// enum uverbs_default_objects: UVERBS_OBJECT_CQ.
pub const UVERBS_OBJECT_CQ: u16 = 3;
/// enum uverbs_default_objects: UVERBS_OBJECT_QP.
pub const UVERBS_OBJECT_QP: u16 = 4;
/// enum uverbs_default_objects: UVERBS_OBJECT_SRQ.
pub const UVERBS_OBJECT_SRQ: u16 = 5;
/// enum uverbs_default_objects: UVERBS_OBJECT_AH.
pub const UVERBS_OBJECT_AH: u16 = 6;
/// enum uverbs_default_objects: UVERBS_OBJECT_MR.
pub const UVERBS_OBJECT_MR: u16 = 7;
/// enum uverbs_default_objects: UVERBS_OBJECT_MW.
pub const UVERBS_OBJECT_MW: u16 = 8;
/// enum uverbs_default_objects: UVERBS_OBJECT_FLOW.
pub const UVERBS_OBJECT_FLOW: u16 = 9;
/// enum uverbs_default_objects: UVERBS_OBJECT_XRCD.
pub const UVERBS_OBJECT_XRCD: u16 = 10;
/// enum uverbs_default_objects: UVERBS_OBJECT_RWQ_IND_TBL.
pub const UVERBS_OBJECT_RWQ_IND_TBL: u16 = 11;
/// enum uverbs_default_objects: UVERBS_OBJECT_WQ.
pub const UVERBS_OBJECT_WQ: u16 = 12;
/// enum uverbs_default_objects: UVERBS_OBJECT_FLOW_ACTION.
pub const UVERBS_OBJECT_FLOW_ACTION: u16 = 13;
/// enum uverbs_default_objects: UVERBS_OBJECT_DM.
pub const UVERBS_OBJECT_DM: u16 = 14;
/// enum uverbs_default_objects: UVERBS_OBJECT_COUNTERS.
pub const UVERBS_OBJECT_COUNTERS: u16 = 15;
/// enum uverbs_default_objects: UVERBS_OBJECT_ASYNC_EVENT.
pub const UVERBS_OBJECT_ASYNC_EVENT: u16 = 16;

/// enum: UVERBS_ATTR_UHW_IN, the driver's request data (udata in).
pub const UVERBS_ATTR_UHW_IN: u16 = UVERBS_UDATA_DRIVER_DATA_FLAG;
/// enum: UVERBS_ATTR_UHW_OUT, the driver's response data (udata out).
pub const UVERBS_ATTR_UHW_OUT: u16 = UVERBS_UDATA_DRIVER_DATA_FLAG + 1;

/// enum uverbs_methods_device: UVERBS_METHOD_INVOKE_WRITE.
pub const UVERBS_METHOD_INVOKE_WRITE: u16 = 0;
/// enum uverbs_methods_device: UVERBS_METHOD_INFO_HANDLES.
pub const UVERBS_METHOD_INFO_HANDLES: u16 = 1;
/// enum uverbs_methods_device: UVERBS_METHOD_QUERY_PORT.
pub const UVERBS_METHOD_QUERY_PORT: u16 = 2;
/// enum uverbs_methods_device: UVERBS_METHOD_GET_CONTEXT.
pub const UVERBS_METHOD_GET_CONTEXT: u16 = 3;
/// enum uverbs_methods_device: UVERBS_METHOD_QUERY_CONTEXT.
pub const UVERBS_METHOD_QUERY_CONTEXT: u16 = 4;
/// enum uverbs_methods_device: UVERBS_METHOD_QUERY_GID_TABLE.
pub const UVERBS_METHOD_QUERY_GID_TABLE: u16 = 5;
/// enum uverbs_methods_device: UVERBS_METHOD_QUERY_GID_ENTRY.
pub const UVERBS_METHOD_QUERY_GID_ENTRY: u16 = 6;

/// enum uverbs_attrs_invoke_write_cmd_attr_ids: UVERBS_ATTR_CORE_IN.
pub const UVERBS_ATTR_CORE_IN: u16 = 0;
/// enum uverbs_attrs_invoke_write_cmd_attr_ids: UVERBS_ATTR_CORE_OUT.
pub const UVERBS_ATTR_CORE_OUT: u16 = 1;
/// enum uverbs_attrs_invoke_write_cmd_attr_ids: UVERBS_ATTR_WRITE_CMD.
pub const UVERBS_ATTR_WRITE_CMD: u16 = 2;

/// enum uverbs_attrs_query_port_cmd_attr_ids: UVERBS_ATTR_QUERY_PORT_PORT_NUM.
pub const UVERBS_ATTR_QUERY_PORT_PORT_NUM: u16 = 0;
/// enum uverbs_attrs_query_port_cmd_attr_ids: UVERBS_ATTR_QUERY_PORT_RESP.
pub const UVERBS_ATTR_QUERY_PORT_RESP: u16 = 1;

/// enum uverbs_attrs_get_context_attr_ids: UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS.
pub const UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS: u16 = 0;
/// enum uverbs_attrs_get_context_attr_ids: UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT.
pub const UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT: u16 = 1;

/// enum uverbs_attrs_query_context_attr_ids: UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS.
pub const UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS: u16 = 0;
/// enum uverbs_attrs_query_context_attr_ids: UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT.
pub const UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT: u16 = 1;

/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_HANDLE.
pub const UVERBS_ATTR_CREATE_CQ_HANDLE: u16 = 0;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_CQE.
pub const UVERBS_ATTR_CREATE_CQ_CQE: u16 = 1;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_USER_HANDLE.
pub const UVERBS_ATTR_CREATE_CQ_USER_HANDLE: u16 = 2;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL.
pub const UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL: u16 = 3;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_COMP_VECTOR.
pub const UVERBS_ATTR_CREATE_CQ_COMP_VECTOR: u16 = 4;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_FLAGS.
pub const UVERBS_ATTR_CREATE_CQ_FLAGS: u16 = 5;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_RESP_CQE.
pub const UVERBS_ATTR_CREATE_CQ_RESP_CQE: u16 = 6;
/// enum uverbs_attrs_create_cq_cmd_attr_ids: UVERBS_ATTR_CREATE_CQ_EVENT_FD.
pub const UVERBS_ATTR_CREATE_CQ_EVENT_FD: u16 = 7;

/// enum uverbs_attrs_destroy_cq_cmd_attr_ids: UVERBS_ATTR_DESTROY_CQ_HANDLE.
pub const UVERBS_ATTR_DESTROY_CQ_HANDLE: u16 = 0;
/// enum uverbs_attrs_destroy_cq_cmd_attr_ids: UVERBS_ATTR_DESTROY_CQ_RESP.
pub const UVERBS_ATTR_DESTROY_CQ_RESP: u16 = 1;

/// enum uverbs_attrs_create_flow_action_esp: UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE.
pub const UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE: u16 = 0;
/// enum uverbs_attrs_create_flow_action_esp: UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS.
pub const UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS: u16 = 1;
/// enum uverbs_attrs_create_flow_action_esp: UVERBS_ATTR_FLOW_ACTION_ESP_ESN.
pub const UVERBS_ATTR_FLOW_ACTION_ESP_ESN: u16 = 2;
/// enum uverbs_attrs_create_flow_action_esp: UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT.
pub const UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT: u16 = 3;
/// enum uverbs_attrs_create_flow_action_esp: UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY.
pub const UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY: u16 = 4;
/// enum uverbs_attrs_create_flow_action_esp: UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP.
pub const UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP: u16 = 5;

/// enum uverbs_attrs_modify_flow_action_esp: UVERBS_ATTR_MODIFY_FLOW_ACTION_ESP_HANDLE.
pub const UVERBS_ATTR_MODIFY_FLOW_ACTION_ESP_HANDLE: u16 = UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE;

/// enum uverbs_attrs_destroy_flow_action_esp: UVERBS_ATTR_DESTROY_FLOW_ACTION_HANDLE.
pub const UVERBS_ATTR_DESTROY_FLOW_ACTION_HANDLE: u16 = 0;

/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_HANDLE: u16 = 0;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_XRCD_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_XRCD_HANDLE: u16 = 1;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_PD_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_PD_HANDLE: u16 = 2;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_SRQ_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_SRQ_HANDLE: u16 = 3;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE: u16 = 4;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE: u16 = 5;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE: u16 = 6;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_USER_HANDLE.
pub const UVERBS_ATTR_CREATE_QP_USER_HANDLE: u16 = 7;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_CAP.
pub const UVERBS_ATTR_CREATE_QP_CAP: u16 = 8;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_TYPE.
pub const UVERBS_ATTR_CREATE_QP_TYPE: u16 = 9;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_FLAGS.
pub const UVERBS_ATTR_CREATE_QP_FLAGS: u16 = 10;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_SOURCE_QPN.
pub const UVERBS_ATTR_CREATE_QP_SOURCE_QPN: u16 = 11;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_EVENT_FD.
pub const UVERBS_ATTR_CREATE_QP_EVENT_FD: u16 = 12;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_RESP_CAP.
pub const UVERBS_ATTR_CREATE_QP_RESP_CAP: u16 = 13;
/// enum uverbs_attrs_create_qp_cmd_attr_ids: UVERBS_ATTR_CREATE_QP_RESP_QP_NUM.
pub const UVERBS_ATTR_CREATE_QP_RESP_QP_NUM: u16 = 14;

/// enum uverbs_attrs_destroy_qp_cmd_attr_ids: UVERBS_ATTR_DESTROY_QP_HANDLE.
pub const UVERBS_ATTR_DESTROY_QP_HANDLE: u16 = 0;
/// enum uverbs_attrs_destroy_qp_cmd_attr_ids: UVERBS_ATTR_DESTROY_QP_RESP.
pub const UVERBS_ATTR_DESTROY_QP_RESP: u16 = 1;

/// enum uverbs_methods_qp: UVERBS_METHOD_QP_CREATE.
pub const UVERBS_METHOD_QP_CREATE: u16 = 0;
/// enum uverbs_methods_qp: UVERBS_METHOD_QP_DESTROY.
pub const UVERBS_METHOD_QP_DESTROY: u16 = 1;

/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_HANDLE.
pub const UVERBS_ATTR_CREATE_SRQ_HANDLE: u16 = 0;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_PD_HANDLE.
pub const UVERBS_ATTR_CREATE_SRQ_PD_HANDLE: u16 = 1;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE.
pub const UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE: u16 = 2;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE.
pub const UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE: u16 = 3;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_USER_HANDLE.
pub const UVERBS_ATTR_CREATE_SRQ_USER_HANDLE: u16 = 4;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_MAX_WR.
pub const UVERBS_ATTR_CREATE_SRQ_MAX_WR: u16 = 5;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_MAX_SGE.
pub const UVERBS_ATTR_CREATE_SRQ_MAX_SGE: u16 = 6;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_LIMIT.
pub const UVERBS_ATTR_CREATE_SRQ_LIMIT: u16 = 7;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS.
pub const UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS: u16 = 8;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_TYPE.
pub const UVERBS_ATTR_CREATE_SRQ_TYPE: u16 = 9;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_EVENT_FD.
pub const UVERBS_ATTR_CREATE_SRQ_EVENT_FD: u16 = 10;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR.
pub const UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR: u16 = 11;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE.
pub const UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE: u16 = 12;
/// enum uverbs_attrs_create_srq_cmd_attr_ids: UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM.
pub const UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM: u16 = 13;

/// enum uverbs_attrs_destroy_srq_cmd_attr_ids: UVERBS_ATTR_DESTROY_SRQ_HANDLE.
pub const UVERBS_ATTR_DESTROY_SRQ_HANDLE: u16 = 0;
/// enum uverbs_attrs_destroy_srq_cmd_attr_ids: UVERBS_ATTR_DESTROY_SRQ_RESP.
pub const UVERBS_ATTR_DESTROY_SRQ_RESP: u16 = 1;

/// enum uverbs_methods_srq: UVERBS_METHOD_SRQ_CREATE.
pub const UVERBS_METHOD_SRQ_CREATE: u16 = 0;
/// enum uverbs_methods_srq: UVERBS_METHOD_SRQ_DESTROY.
pub const UVERBS_METHOD_SRQ_DESTROY: u16 = 1;

/// enum uverbs_methods_cq: UVERBS_METHOD_CQ_CREATE.
pub const UVERBS_METHOD_CQ_CREATE: u16 = 0;
/// enum uverbs_methods_cq: UVERBS_METHOD_CQ_DESTROY.
pub const UVERBS_METHOD_CQ_DESTROY: u16 = 1;

/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_HANDLE.
pub const UVERBS_ATTR_CREATE_WQ_HANDLE: u16 = 0;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_PD_HANDLE.
pub const UVERBS_ATTR_CREATE_WQ_PD_HANDLE: u16 = 1;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_CQ_HANDLE.
pub const UVERBS_ATTR_CREATE_WQ_CQ_HANDLE: u16 = 2;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_USER_HANDLE.
pub const UVERBS_ATTR_CREATE_WQ_USER_HANDLE: u16 = 3;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_TYPE.
pub const UVERBS_ATTR_CREATE_WQ_TYPE: u16 = 4;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_EVENT_FD.
pub const UVERBS_ATTR_CREATE_WQ_EVENT_FD: u16 = 5;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_MAX_WR.
pub const UVERBS_ATTR_CREATE_WQ_MAX_WR: u16 = 6;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_MAX_SGE.
pub const UVERBS_ATTR_CREATE_WQ_MAX_SGE: u16 = 7;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_FLAGS.
pub const UVERBS_ATTR_CREATE_WQ_FLAGS: u16 = 8;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR.
pub const UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR: u16 = 9;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE.
pub const UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE: u16 = 10;
/// enum uverbs_attrs_create_wq_cmd_attr_ids: UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM.
pub const UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM: u16 = 11;

/// enum uverbs_attrs_destroy_wq_cmd_attr_ids: UVERBS_ATTR_DESTROY_WQ_HANDLE.
pub const UVERBS_ATTR_DESTROY_WQ_HANDLE: u16 = 0;
/// enum uverbs_attrs_destroy_wq_cmd_attr_ids: UVERBS_ATTR_DESTROY_WQ_RESP.
pub const UVERBS_ATTR_DESTROY_WQ_RESP: u16 = 1;

/// enum uverbs_methods_wq: UVERBS_METHOD_WQ_CREATE.
pub const UVERBS_METHOD_WQ_CREATE: u16 = 0;
/// enum uverbs_methods_wq: UVERBS_METHOD_WQ_DESTROY.
pub const UVERBS_METHOD_WQ_DESTROY: u16 = 1;

/// enum uverbs_methods_actions_flow_action_ops: UVERBS_METHOD_FLOW_ACTION_ESP_CREATE.
pub const UVERBS_METHOD_FLOW_ACTION_ESP_CREATE: u16 = 0;
/// enum uverbs_methods_actions_flow_action_ops: UVERBS_METHOD_FLOW_ACTION_DESTROY.
pub const UVERBS_METHOD_FLOW_ACTION_DESTROY: u16 = 1;
/// enum uverbs_methods_actions_flow_action_ops: UVERBS_METHOD_FLOW_ACTION_ESP_MODIFY.
pub const UVERBS_METHOD_FLOW_ACTION_ESP_MODIFY: u16 = 2;

/// enum uverbs_attrs_alloc_dm_cmd_attr_ids: UVERBS_ATTR_ALLOC_DM_HANDLE.
pub const UVERBS_ATTR_ALLOC_DM_HANDLE: u16 = 0;
/// enum uverbs_attrs_alloc_dm_cmd_attr_ids: UVERBS_ATTR_ALLOC_DM_LENGTH.
pub const UVERBS_ATTR_ALLOC_DM_LENGTH: u16 = 1;
/// enum uverbs_attrs_alloc_dm_cmd_attr_ids: UVERBS_ATTR_ALLOC_DM_ALIGNMENT.
pub const UVERBS_ATTR_ALLOC_DM_ALIGNMENT: u16 = 2;

/// enum uverbs_attrs_free_dm_cmd_attr_ids: UVERBS_ATTR_FREE_DM_HANDLE.
pub const UVERBS_ATTR_FREE_DM_HANDLE: u16 = 0;

/// enum uverbs_methods_dm: UVERBS_METHOD_DM_ALLOC.
pub const UVERBS_METHOD_DM_ALLOC: u16 = 0;
/// enum uverbs_methods_dm: UVERBS_METHOD_DM_FREE.
pub const UVERBS_METHOD_DM_FREE: u16 = 1;

/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_HANDLE.
pub const UVERBS_ATTR_REG_DM_MR_HANDLE: u16 = 0;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_OFFSET.
pub const UVERBS_ATTR_REG_DM_MR_OFFSET: u16 = 1;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_LENGTH.
pub const UVERBS_ATTR_REG_DM_MR_LENGTH: u16 = 2;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_PD_HANDLE.
pub const UVERBS_ATTR_REG_DM_MR_PD_HANDLE: u16 = 3;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS.
pub const UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS: u16 = 4;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_DM_HANDLE.
pub const UVERBS_ATTR_REG_DM_MR_DM_HANDLE: u16 = 5;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_RESP_LKEY.
pub const UVERBS_ATTR_REG_DM_MR_RESP_LKEY: u16 = 6;
/// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: UVERBS_ATTR_REG_DM_MR_RESP_RKEY.
pub const UVERBS_ATTR_REG_DM_MR_RESP_RKEY: u16 = 7;

/// enum uverbs_methods_mr: UVERBS_METHOD_DM_MR_REG.
pub const UVERBS_METHOD_DM_MR_REG: u16 = 0;
/// enum uverbs_methods_mr: UVERBS_METHOD_MR_DESTROY.
pub const UVERBS_METHOD_MR_DESTROY: u16 = 1;
/// enum uverbs_methods_mr: UVERBS_METHOD_ADVISE_MR.
pub const UVERBS_METHOD_ADVISE_MR: u16 = 2;
/// enum uverbs_methods_mr: UVERBS_METHOD_QUERY_MR.
pub const UVERBS_METHOD_QUERY_MR: u16 = 3;
/// enum uverbs_methods_mr: UVERBS_METHOD_REG_DMABUF_MR.
pub const UVERBS_METHOD_REG_DMABUF_MR: u16 = 4;

/// enum uverbs_attrs_mr_destroy_ids: UVERBS_ATTR_DESTROY_MR_HANDLE.
pub const UVERBS_ATTR_DESTROY_MR_HANDLE: u16 = 0;

/// enum uverbs_attrs_advise_mr_cmd_attr_ids: UVERBS_ATTR_ADVISE_MR_PD_HANDLE.
pub const UVERBS_ATTR_ADVISE_MR_PD_HANDLE: u16 = 0;
/// enum uverbs_attrs_advise_mr_cmd_attr_ids: UVERBS_ATTR_ADVISE_MR_ADVICE.
pub const UVERBS_ATTR_ADVISE_MR_ADVICE: u16 = 1;
/// enum uverbs_attrs_advise_mr_cmd_attr_ids: UVERBS_ATTR_ADVISE_MR_FLAGS.
pub const UVERBS_ATTR_ADVISE_MR_FLAGS: u16 = 2;
/// enum uverbs_attrs_advise_mr_cmd_attr_ids: UVERBS_ATTR_ADVISE_MR_SGE_LIST.
pub const UVERBS_ATTR_ADVISE_MR_SGE_LIST: u16 = 3;

/// enum uverbs_attrs_query_mr_cmd_attr_ids: UVERBS_ATTR_QUERY_MR_HANDLE.
pub const UVERBS_ATTR_QUERY_MR_HANDLE: u16 = 0;
/// enum uverbs_attrs_query_mr_cmd_attr_ids: UVERBS_ATTR_QUERY_MR_RESP_LKEY.
pub const UVERBS_ATTR_QUERY_MR_RESP_LKEY: u16 = 1;
/// enum uverbs_attrs_query_mr_cmd_attr_ids: UVERBS_ATTR_QUERY_MR_RESP_RKEY.
pub const UVERBS_ATTR_QUERY_MR_RESP_RKEY: u16 = 2;
/// enum uverbs_attrs_query_mr_cmd_attr_ids: UVERBS_ATTR_QUERY_MR_RESP_LENGTH.
pub const UVERBS_ATTR_QUERY_MR_RESP_LENGTH: u16 = 3;
/// enum uverbs_attrs_query_mr_cmd_attr_ids: UVERBS_ATTR_QUERY_MR_RESP_IOVA.
pub const UVERBS_ATTR_QUERY_MR_RESP_IOVA: u16 = 4;

/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_HANDLE.
pub const UVERBS_ATTR_REG_DMABUF_MR_HANDLE: u16 = 0;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE.
pub const UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE: u16 = 1;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_OFFSET.
pub const UVERBS_ATTR_REG_DMABUF_MR_OFFSET: u16 = 2;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_LENGTH.
pub const UVERBS_ATTR_REG_DMABUF_MR_LENGTH: u16 = 3;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_IOVA.
pub const UVERBS_ATTR_REG_DMABUF_MR_IOVA: u16 = 4;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_FD.
pub const UVERBS_ATTR_REG_DMABUF_MR_FD: u16 = 5;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS.
pub const UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS: u16 = 6;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY.
pub const UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY: u16 = 7;
/// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY.
pub const UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY: u16 = 8;

/// enum uverbs_attrs_create_counters_cmd_attr_ids: UVERBS_ATTR_CREATE_COUNTERS_HANDLE.
pub const UVERBS_ATTR_CREATE_COUNTERS_HANDLE: u16 = 0;

/// enum uverbs_attrs_destroy_counters_cmd_attr_ids: UVERBS_ATTR_DESTROY_COUNTERS_HANDLE.
pub const UVERBS_ATTR_DESTROY_COUNTERS_HANDLE: u16 = 0;

/// enum uverbs_attrs_read_counters_cmd_attr_ids: UVERBS_ATTR_READ_COUNTERS_HANDLE.
pub const UVERBS_ATTR_READ_COUNTERS_HANDLE: u16 = 0;
/// enum uverbs_attrs_read_counters_cmd_attr_ids: UVERBS_ATTR_READ_COUNTERS_BUFF.
pub const UVERBS_ATTR_READ_COUNTERS_BUFF: u16 = 1;
/// enum uverbs_attrs_read_counters_cmd_attr_ids: UVERBS_ATTR_READ_COUNTERS_FLAGS.
pub const UVERBS_ATTR_READ_COUNTERS_FLAGS: u16 = 2;

/// enum uverbs_methods_actions_counters_ops: UVERBS_METHOD_COUNTERS_CREATE.
pub const UVERBS_METHOD_COUNTERS_CREATE: u16 = 0;
/// enum uverbs_methods_actions_counters_ops: UVERBS_METHOD_COUNTERS_DESTROY.
pub const UVERBS_METHOD_COUNTERS_DESTROY: u16 = 1;
/// enum uverbs_methods_actions_counters_ops: UVERBS_METHOD_COUNTERS_READ.
pub const UVERBS_METHOD_COUNTERS_READ: u16 = 2;

/// enum uverbs_attrs_info_handles_id: UVERBS_ATTR_INFO_OBJECT_ID.
pub const UVERBS_ATTR_INFO_OBJECT_ID: u16 = 0;
/// enum uverbs_attrs_info_handles_id: UVERBS_ATTR_INFO_TOTAL_HANDLES.
pub const UVERBS_ATTR_INFO_TOTAL_HANDLES: u16 = 1;
/// enum uverbs_attrs_info_handles_id: UVERBS_ATTR_INFO_HANDLES_LIST.
pub const UVERBS_ATTR_INFO_HANDLES_LIST: u16 = 2;

/// enum uverbs_methods_pd: UVERBS_METHOD_PD_DESTROY.
pub const UVERBS_METHOD_PD_DESTROY: u16 = 0;

/// enum uverbs_attrs_pd_destroy_ids: UVERBS_ATTR_DESTROY_PD_HANDLE.
pub const UVERBS_ATTR_DESTROY_PD_HANDLE: u16 = 0;

/// enum uverbs_methods_mw: UVERBS_METHOD_MW_DESTROY.
pub const UVERBS_METHOD_MW_DESTROY: u16 = 0;

/// enum uverbs_attrs_mw_destroy_ids: UVERBS_ATTR_DESTROY_MW_HANDLE.
pub const UVERBS_ATTR_DESTROY_MW_HANDLE: u16 = 0;

/// enum uverbs_methods_xrcd: UVERBS_METHOD_XRCD_DESTROY.
pub const UVERBS_METHOD_XRCD_DESTROY: u16 = 0;

/// enum uverbs_attrs_xrcd_destroy_ids: UVERBS_ATTR_DESTROY_XRCD_HANDLE.
pub const UVERBS_ATTR_DESTROY_XRCD_HANDLE: u16 = 0;

/// enum uverbs_methods_ah: UVERBS_METHOD_AH_DESTROY.
pub const UVERBS_METHOD_AH_DESTROY: u16 = 0;

/// enum uverbs_attrs_ah_destroy_ids: UVERBS_ATTR_DESTROY_AH_HANDLE.
pub const UVERBS_ATTR_DESTROY_AH_HANDLE: u16 = 0;

/// enum uverbs_methods_rwq_ind_tbl: UVERBS_METHOD_RWQ_IND_TBL_DESTROY.
pub const UVERBS_METHOD_RWQ_IND_TBL_DESTROY: u16 = 0;

/// enum uverbs_attrs_rwq_ind_tbl_destroy_ids: UVERBS_ATTR_DESTROY_RWQ_IND_TBL_HANDLE.
pub const UVERBS_ATTR_DESTROY_RWQ_IND_TBL_HANDLE: u16 = 0;

/// enum uverbs_methods_flow: UVERBS_METHOD_FLOW_DESTROY.
pub const UVERBS_METHOD_FLOW_DESTROY: u16 = 0;

/// enum uverbs_attrs_flow_destroy_ids: UVERBS_ATTR_DESTROY_FLOW_HANDLE.
pub const UVERBS_ATTR_DESTROY_FLOW_HANDLE: u16 = 0;

/// enum uverbs_method_async_event: UVERBS_METHOD_ASYNC_EVENT_ALLOC.
pub const UVERBS_METHOD_ASYNC_EVENT_ALLOC: u16 = 0;

/// enum uverbs_attrs_async_event_create: UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE.
pub const UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE: u16 = 0;

/// enum uverbs_attrs_query_gid_table_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE.
pub const UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE: u16 = 0;
/// enum uverbs_attrs_query_gid_table_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_TABLE_FLAGS.
pub const UVERBS_ATTR_QUERY_GID_TABLE_FLAGS: u16 = 1;
/// enum uverbs_attrs_query_gid_table_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES.
pub const UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES: u16 = 2;
/// enum uverbs_attrs_query_gid_table_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES.
pub const UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES: u16 = 3;

/// enum uverbs_attrs_query_gid_entry_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_ENTRY_PORT.
pub const UVERBS_ATTR_QUERY_GID_ENTRY_PORT: u16 = 0;
/// enum uverbs_attrs_query_gid_entry_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX.
pub const UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX: u16 = 1;
/// enum uverbs_attrs_query_gid_entry_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS.
pub const UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS: u16 = 2;
/// enum uverbs_attrs_query_gid_entry_cmd_attr_ids: UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY.
pub const UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY: u16 = 3;

// ---- mlx5_user_ioctl_cmds.h (driver namespace: every enum starts at 1 << UVERBS_ID_NS_SHIFT) ------

/// enum mlx5_ib_create_flow_action_attrs: MLX5_IB_ATTR_CREATE_FLOW_ACTION_FLAGS.
pub const MLX5_IB_ATTR_CREATE_FLOW_ACTION_FLAGS: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_dm_methods: MLX5_IB_METHOD_DM_MAP_OP_ADDR.
pub const MLX5_IB_METHOD_DM_MAP_OP_ADDR: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_dm_methods: MLX5_IB_METHOD_DM_QUERY.
pub const MLX5_IB_METHOD_DM_QUERY: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_dm_map_op_addr_attrs: MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_HANDLE.
pub const MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_dm_map_op_addr_attrs: MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_OP.
pub const MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_OP: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_dm_map_op_addr_attrs: MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_START_OFFSET.
pub const MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_START_OFFSET: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_dm_map_op_addr_attrs: MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_PAGE_INDEX.
pub const MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_PAGE_INDEX: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_query_dm_attrs: MLX5_IB_ATTR_QUERY_DM_REQ_HANDLE.
pub const MLX5_IB_ATTR_QUERY_DM_REQ_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_query_dm_attrs: MLX5_IB_ATTR_QUERY_DM_RESP_START_OFFSET.
pub const MLX5_IB_ATTR_QUERY_DM_RESP_START_OFFSET: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_query_dm_attrs: MLX5_IB_ATTR_QUERY_DM_RESP_PAGE_INDEX.
pub const MLX5_IB_ATTR_QUERY_DM_RESP_PAGE_INDEX: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_query_dm_attrs: MLX5_IB_ATTR_QUERY_DM_RESP_LENGTH.
pub const MLX5_IB_ATTR_QUERY_DM_RESP_LENGTH: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_alloc_dm_attrs: MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET.
pub const MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_alloc_dm_attrs: MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX.
pub const MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_alloc_dm_attrs: MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE.
pub const MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE: u16 = UVERBS_API_NS_FLAG + 2;

/// enum mlx5_ib_devx_methods: MLX5_IB_METHOD_DEVX_OTHER.
pub const MLX5_IB_METHOD_DEVX_OTHER: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_methods: MLX5_IB_METHOD_DEVX_QUERY_UAR.
pub const MLX5_IB_METHOD_DEVX_QUERY_UAR: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_methods: MLX5_IB_METHOD_DEVX_QUERY_EQN.
pub const MLX5_IB_METHOD_DEVX_QUERY_EQN: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_devx_methods: MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT.
pub const MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_devx_other_attrs: MLX5_IB_ATTR_DEVX_OTHER_CMD_IN.
pub const MLX5_IB_ATTR_DEVX_OTHER_CMD_IN: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_other_attrs: MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT.
pub const MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_devx_obj_create_attrs: MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE.
pub const MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_obj_create_attrs: MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN.
pub const MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_obj_create_attrs: MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT.
pub const MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT: u16 = UVERBS_API_NS_FLAG + 2;

/// enum mlx5_ib_devx_query_uar_attrs: MLX5_IB_ATTR_DEVX_QUERY_UAR_USER_IDX.
pub const MLX5_IB_ATTR_DEVX_QUERY_UAR_USER_IDX: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_query_uar_attrs: MLX5_IB_ATTR_DEVX_QUERY_UAR_DEV_IDX.
pub const MLX5_IB_ATTR_DEVX_QUERY_UAR_DEV_IDX: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_devx_obj_destroy_attrs: MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE.
pub const MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_devx_obj_modify_attrs: MLX5_IB_ATTR_DEVX_OBJ_MODIFY_HANDLE.
pub const MLX5_IB_ATTR_DEVX_OBJ_MODIFY_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_obj_modify_attrs: MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_IN.
pub const MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_IN: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_obj_modify_attrs: MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT.
pub const MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT: u16 = UVERBS_API_NS_FLAG + 2;

/// enum mlx5_ib_devx_obj_query_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_obj_query_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_obj_query_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT: u16 = UVERBS_API_NS_FLAG + 2;

/// enum mlx5_ib_devx_obj_query_async_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_HANDLE.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_obj_query_async_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_CMD_IN.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_CMD_IN: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_obj_query_async_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_FD.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_FD: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_devx_obj_query_async_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_WR_ID.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_WR_ID: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_devx_obj_query_async_attrs: MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_OUT_LEN.
pub const MLX5_IB_ATTR_DEVX_OBJ_QUERY_ASYNC_OUT_LEN: u16 = UVERBS_API_NS_FLAG + 4;

/// enum mlx5_ib_devx_subscribe_event_attrs: MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_HANDLE.
pub const MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_subscribe_event_attrs: MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_OBJ_HANDLE.
pub const MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_OBJ_HANDLE: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_subscribe_event_attrs: MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_TYPE_NUM_LIST.
pub const MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_TYPE_NUM_LIST: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_devx_subscribe_event_attrs: MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_NUM.
pub const MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_NUM: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_devx_subscribe_event_attrs: MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_COOKIE.
pub const MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_COOKIE: u16 = UVERBS_API_NS_FLAG + 4;

/// enum mlx5_ib_devx_query_eqn_attrs: MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC.
pub const MLX5_IB_ATTR_DEVX_QUERY_EQN_USER_VEC: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_query_eqn_attrs: MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN.
pub const MLX5_IB_ATTR_DEVX_QUERY_EQN_DEV_EQN: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_devx_obj_methods: MLX5_IB_METHOD_DEVX_OBJ_CREATE.
pub const MLX5_IB_METHOD_DEVX_OBJ_CREATE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_obj_methods: MLX5_IB_METHOD_DEVX_OBJ_DESTROY.
pub const MLX5_IB_METHOD_DEVX_OBJ_DESTROY: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_obj_methods: MLX5_IB_METHOD_DEVX_OBJ_MODIFY.
pub const MLX5_IB_METHOD_DEVX_OBJ_MODIFY: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_devx_obj_methods: MLX5_IB_METHOD_DEVX_OBJ_QUERY.
pub const MLX5_IB_METHOD_DEVX_OBJ_QUERY: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_devx_obj_methods: MLX5_IB_METHOD_DEVX_OBJ_ASYNC_QUERY.
pub const MLX5_IB_METHOD_DEVX_OBJ_ASYNC_QUERY: u16 = UVERBS_API_NS_FLAG + 4;

/// enum mlx5_ib_var_alloc_attrs: MLX5_IB_ATTR_VAR_OBJ_ALLOC_HANDLE.
pub const MLX5_IB_ATTR_VAR_OBJ_ALLOC_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_var_alloc_attrs: MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_OFFSET.
pub const MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_OFFSET: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_var_alloc_attrs: MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_LENGTH.
pub const MLX5_IB_ATTR_VAR_OBJ_ALLOC_MMAP_LENGTH: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_var_alloc_attrs: MLX5_IB_ATTR_VAR_OBJ_ALLOC_PAGE_ID.
pub const MLX5_IB_ATTR_VAR_OBJ_ALLOC_PAGE_ID: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_var_obj_destroy_attrs: MLX5_IB_ATTR_VAR_OBJ_DESTROY_HANDLE.
pub const MLX5_IB_ATTR_VAR_OBJ_DESTROY_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_var_obj_methods: MLX5_IB_METHOD_VAR_OBJ_ALLOC.
pub const MLX5_IB_METHOD_VAR_OBJ_ALLOC: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_var_obj_methods: MLX5_IB_METHOD_VAR_OBJ_DESTROY.
pub const MLX5_IB_METHOD_VAR_OBJ_DESTROY: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_uar_alloc_attrs: MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE.
pub const MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_uar_alloc_attrs: MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE.
pub const MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_uar_alloc_attrs: MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET.
pub const MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_uar_alloc_attrs: MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH.
pub const MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_uar_alloc_attrs: MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID.
pub const MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID: u16 = UVERBS_API_NS_FLAG + 4;

/// enum mlx5_ib_uar_obj_destroy_attrs: MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE.
pub const MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_uar_obj_methods: MLX5_IB_METHOD_UAR_OBJ_ALLOC.
pub const MLX5_IB_METHOD_UAR_OBJ_ALLOC: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_uar_obj_methods: MLX5_IB_METHOD_UAR_OBJ_DESTROY.
pub const MLX5_IB_METHOD_UAR_OBJ_DESTROY: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_LEN.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_LEN: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_ACCESS.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_ACCESS: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID: u16 = UVERBS_API_NS_FLAG + 4;
/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_PGSZ_BITMAP.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_PGSZ_BITMAP: u16 = UVERBS_API_NS_FLAG + 5;
/// enum mlx5_ib_devx_umem_reg_attrs: MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD.
pub const MLX5_IB_ATTR_DEVX_UMEM_REG_DMABUF_FD: u16 = UVERBS_API_NS_FLAG + 6;

/// enum mlx5_ib_devx_umem_dereg_attrs: MLX5_IB_ATTR_DEVX_UMEM_DEREG_HANDLE.
pub const MLX5_IB_ATTR_DEVX_UMEM_DEREG_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_pp_obj_methods: MLX5_IB_METHOD_PP_OBJ_ALLOC.
pub const MLX5_IB_METHOD_PP_OBJ_ALLOC: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_pp_obj_methods: MLX5_IB_METHOD_PP_OBJ_DESTROY.
pub const MLX5_IB_METHOD_PP_OBJ_DESTROY: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_pp_alloc_attrs: MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE.
pub const MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_pp_alloc_attrs: MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX.
pub const MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_pp_alloc_attrs: MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS.
pub const MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_pp_alloc_attrs: MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX.
pub const MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_pp_obj_destroy_attrs: MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE.
pub const MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_devx_umem_methods: MLX5_IB_METHOD_DEVX_UMEM_REG.
pub const MLX5_IB_METHOD_DEVX_UMEM_REG: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_umem_methods: MLX5_IB_METHOD_DEVX_UMEM_DEREG.
pub const MLX5_IB_METHOD_DEVX_UMEM_DEREG: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_devx_async_cmd_fd_alloc_attrs: MLX5_IB_ATTR_DEVX_ASYNC_CMD_FD_ALLOC_HANDLE.
pub const MLX5_IB_ATTR_DEVX_ASYNC_CMD_FD_ALLOC_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_devx_async_event_fd_alloc_attrs: MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_HANDLE.
pub const MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_devx_async_event_fd_alloc_attrs: MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_FLAGS.
pub const MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_FLAGS: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_devx_async_cmd_fd_methods: MLX5_IB_METHOD_DEVX_ASYNC_CMD_FD_ALLOC.
pub const MLX5_IB_METHOD_DEVX_ASYNC_CMD_FD_ALLOC: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_devx_async_event_fd_methods: MLX5_IB_METHOD_DEVX_ASYNC_EVENT_FD_ALLOC.
pub const MLX5_IB_METHOD_DEVX_ASYNC_EVENT_FD_ALLOC: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_objects: MLX5_IB_OBJECT_DEVX.
pub const MLX5_IB_OBJECT_DEVX: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_DEVX_OBJ.
pub const MLX5_IB_OBJECT_DEVX_OBJ: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_DEVX_UMEM.
pub const MLX5_IB_OBJECT_DEVX_UMEM: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_FLOW_MATCHER.
pub const MLX5_IB_OBJECT_FLOW_MATCHER: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD.
pub const MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD: u16 = UVERBS_API_NS_FLAG + 4;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD.
pub const MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD: u16 = UVERBS_API_NS_FLAG + 5;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_VAR.
pub const MLX5_IB_OBJECT_VAR: u16 = UVERBS_API_NS_FLAG + 6;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_PP.
pub const MLX5_IB_OBJECT_PP: u16 = UVERBS_API_NS_FLAG + 7;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_UAR.
pub const MLX5_IB_OBJECT_UAR: u16 = UVERBS_API_NS_FLAG + 8;
/// enum mlx5_ib_objects: MLX5_IB_OBJECT_STEERING_ANCHOR.
pub const MLX5_IB_OBJECT_STEERING_ANCHOR: u16 = UVERBS_API_NS_FLAG + 9;

/// enum mlx5_ib_flow_matcher_create_attrs: MLX5_IB_ATTR_FLOW_MATCHER_CREATE_HANDLE.
pub const MLX5_IB_ATTR_FLOW_MATCHER_CREATE_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_flow_matcher_create_attrs: MLX5_IB_ATTR_FLOW_MATCHER_MATCH_MASK.
pub const MLX5_IB_ATTR_FLOW_MATCHER_MATCH_MASK: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_flow_matcher_create_attrs: MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE.
pub const MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_flow_matcher_create_attrs: MLX5_IB_ATTR_FLOW_MATCHER_MATCH_CRITERIA.
pub const MLX5_IB_ATTR_FLOW_MATCHER_MATCH_CRITERIA: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_flow_matcher_create_attrs: MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS.
pub const MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS: u16 = UVERBS_API_NS_FLAG + 4;
/// enum mlx5_ib_flow_matcher_create_attrs: MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE.
pub const MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE: u16 = UVERBS_API_NS_FLAG + 5;

/// enum mlx5_ib_flow_matcher_destroy_attrs: MLX5_IB_ATTR_FLOW_MATCHER_DESTROY_HANDLE.
pub const MLX5_IB_ATTR_FLOW_MATCHER_DESTROY_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_flow_matcher_methods: MLX5_IB_METHOD_FLOW_MATCHER_CREATE.
pub const MLX5_IB_METHOD_FLOW_MATCHER_CREATE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_flow_matcher_methods: MLX5_IB_METHOD_FLOW_MATCHER_DESTROY.
pub const MLX5_IB_METHOD_FLOW_MATCHER_DESTROY: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_flow_steering_anchor_create_attrs: MLX5_IB_ATTR_STEERING_ANCHOR_CREATE_HANDLE.
pub const MLX5_IB_ATTR_STEERING_ANCHOR_CREATE_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_flow_steering_anchor_create_attrs: MLX5_IB_ATTR_STEERING_ANCHOR_FT_TYPE.
pub const MLX5_IB_ATTR_STEERING_ANCHOR_FT_TYPE: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_flow_steering_anchor_create_attrs: MLX5_IB_ATTR_STEERING_ANCHOR_PRIORITY.
pub const MLX5_IB_ATTR_STEERING_ANCHOR_PRIORITY: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_flow_steering_anchor_create_attrs: MLX5_IB_ATTR_STEERING_ANCHOR_FT_ID.
pub const MLX5_IB_ATTR_STEERING_ANCHOR_FT_ID: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_flow_steering_anchor_destroy_attrs: MLX5_IB_ATTR_STEERING_ANCHOR_DESTROY_HANDLE.
pub const MLX5_IB_ATTR_STEERING_ANCHOR_DESTROY_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_steering_anchor_methods: MLX5_IB_METHOD_STEERING_ANCHOR_CREATE.
pub const MLX5_IB_METHOD_STEERING_ANCHOR_CREATE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_steering_anchor_methods: MLX5_IB_METHOD_STEERING_ANCHOR_DESTROY.
pub const MLX5_IB_METHOD_STEERING_ANCHOR_DESTROY: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_device_query_context_attrs: MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX.
pub const MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX: u16 = UVERBS_API_NS_FLAG;

/// MLX5_IB_DW_MATCH_PARAM: dwords of a flow match parameter block.
pub const MLX5_IB_DW_MATCH_PARAM: usize = 0xA0;

/// struct mlx5_ib_match_params (mlx5_user_ioctl_cmds.h).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx5_ib_match_params {
    /// The match parameter block.
    pub match_params: [u32; MLX5_IB_DW_MATCH_PARAM],
}

impl Default for mlx5_ib_match_params {
    fn default() -> Self {
        Self {
            match_params: [0; MLX5_IB_DW_MATCH_PARAM],
        }
    }
}

/// enum mlx5_ib_flow_type: MLX5_IB_FLOW_TYPE_NORMAL.
pub const MLX5_IB_FLOW_TYPE_NORMAL: u32 = 0;
/// enum mlx5_ib_flow_type: MLX5_IB_FLOW_TYPE_SNIFFER.
pub const MLX5_IB_FLOW_TYPE_SNIFFER: u32 = 1;
/// enum mlx5_ib_flow_type: MLX5_IB_FLOW_TYPE_ALL_DEFAULT.
pub const MLX5_IB_FLOW_TYPE_ALL_DEFAULT: u32 = 2;
/// enum mlx5_ib_flow_type: MLX5_IB_FLOW_TYPE_MC_DEFAULT.
pub const MLX5_IB_FLOW_TYPE_MC_DEFAULT: u32 = 3;

/// enum mlx5_ib_create_flow_flags: MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DEFAULT_MISS.
pub const MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DEFAULT_MISS: u32 = 1 << 0;
/// enum mlx5_ib_create_flow_flags: MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DROP.
pub const MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DROP: u32 = 1 << 1;

/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_HANDLE.
pub const MLX5_IB_ATTR_CREATE_FLOW_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE.
pub const MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_DEST_QP.
pub const MLX5_IB_ATTR_CREATE_FLOW_DEST_QP: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_DEST_DEVX.
pub const MLX5_IB_ATTR_CREATE_FLOW_DEST_DEVX: u16 = UVERBS_API_NS_FLAG + 3;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_MATCHER.
pub const MLX5_IB_ATTR_CREATE_FLOW_MATCHER: u16 = UVERBS_API_NS_FLAG + 4;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS.
pub const MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS: u16 = UVERBS_API_NS_FLAG + 5;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_TAG.
pub const MLX5_IB_ATTR_CREATE_FLOW_TAG: u16 = UVERBS_API_NS_FLAG + 6;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX.
pub const MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX: u16 = UVERBS_API_NS_FLAG + 7;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX_OFFSET.
pub const MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX_OFFSET: u16 = UVERBS_API_NS_FLAG + 8;
/// enum mlx5_ib_create_flow_attrs: MLX5_IB_ATTR_CREATE_FLOW_FLAGS.
pub const MLX5_IB_ATTR_CREATE_FLOW_FLAGS: u16 = UVERBS_API_NS_FLAG + 9;

/// enum mlx5_ib_destroy_flow_attrs: MLX5_IB_ATTR_DESTROY_FLOW_HANDLE.
pub const MLX5_IB_ATTR_DESTROY_FLOW_HANDLE: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_flow_methods: MLX5_IB_METHOD_CREATE_FLOW.
pub const MLX5_IB_METHOD_CREATE_FLOW: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_flow_methods: MLX5_IB_METHOD_DESTROY_FLOW.
pub const MLX5_IB_METHOD_DESTROY_FLOW: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_flow_action_methods: MLX5_IB_METHOD_FLOW_ACTION_CREATE_MODIFY_HEADER.
pub const MLX5_IB_METHOD_FLOW_ACTION_CREATE_MODIFY_HEADER: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_flow_action_methods: MLX5_IB_METHOD_FLOW_ACTION_CREATE_PACKET_REFORMAT.
pub const MLX5_IB_METHOD_FLOW_ACTION_CREATE_PACKET_REFORMAT: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_create_flow_action_create_modify_header_attrs: MLX5_IB_ATTR_CREATE_MODIFY_HEADER_HANDLE.
pub const MLX5_IB_ATTR_CREATE_MODIFY_HEADER_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_create_flow_action_create_modify_header_attrs: MLX5_IB_ATTR_CREATE_MODIFY_HEADER_ACTIONS_PRM.
pub const MLX5_IB_ATTR_CREATE_MODIFY_HEADER_ACTIONS_PRM: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_create_flow_action_create_modify_header_attrs: MLX5_IB_ATTR_CREATE_MODIFY_HEADER_FT_TYPE.
pub const MLX5_IB_ATTR_CREATE_MODIFY_HEADER_FT_TYPE: u16 = UVERBS_API_NS_FLAG + 2;

/// enum mlx5_ib_create_flow_action_create_packet_reformat_attrs: MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_HANDLE.
pub const MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_create_flow_action_create_packet_reformat_attrs: MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_TYPE.
pub const MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_TYPE: u16 = UVERBS_API_NS_FLAG + 1;
/// enum mlx5_ib_create_flow_action_create_packet_reformat_attrs: MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_FT_TYPE.
pub const MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_FT_TYPE: u16 = UVERBS_API_NS_FLAG + 2;
/// enum mlx5_ib_create_flow_action_create_packet_reformat_attrs: MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_DATA_BUF.
pub const MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_DATA_BUF: u16 = UVERBS_API_NS_FLAG + 3;

/// enum mlx5_ib_query_pd_attrs: MLX5_IB_ATTR_QUERY_PD_HANDLE.
pub const MLX5_IB_ATTR_QUERY_PD_HANDLE: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_query_pd_attrs: MLX5_IB_ATTR_QUERY_PD_RESP_PDN.
pub const MLX5_IB_ATTR_QUERY_PD_RESP_PDN: u16 = UVERBS_API_NS_FLAG + 1;

/// enum mlx5_ib_pd_methods: MLX5_IB_METHOD_PD_QUERY.
pub const MLX5_IB_METHOD_PD_QUERY: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_device_methods: MLX5_IB_METHOD_QUERY_PORT.
pub const MLX5_IB_METHOD_QUERY_PORT: u16 = UVERBS_API_NS_FLAG;

/// enum mlx5_ib_query_port_attrs: MLX5_IB_ATTR_QUERY_PORT_PORT_NUM.
pub const MLX5_IB_ATTR_QUERY_PORT_PORT_NUM: u16 = UVERBS_API_NS_FLAG;
/// enum mlx5_ib_query_port_attrs: MLX5_IB_ATTR_QUERY_PORT.
pub const MLX5_IB_ATTR_QUERY_PORT: u16 = UVERBS_API_NS_FLAG + 1;

// ---- ib_user_ioctl_verbs.h -----------------------------------------------------------------------

/// IB_UVERBS_ACCESS_OPTIONAL_FIRST: first optional access flag.
pub const IB_UVERBS_ACCESS_OPTIONAL_FIRST: u32 = 1 << 20;
/// IB_UVERBS_ACCESS_OPTIONAL_LAST: last optional access flag.
pub const IB_UVERBS_ACCESS_OPTIONAL_LAST: u32 = 1 << 29;

/// enum ib_uverbs_core_support: IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS.
pub const IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS: u64 = 1 << 0;

/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_LOCAL_WRITE.
pub const IB_UVERBS_ACCESS_LOCAL_WRITE: u32 = 1 << 0;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_REMOTE_WRITE.
pub const IB_UVERBS_ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_REMOTE_READ.
pub const IB_UVERBS_ACCESS_REMOTE_READ: u32 = 1 << 2;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_REMOTE_ATOMIC.
pub const IB_UVERBS_ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_MW_BIND.
pub const IB_UVERBS_ACCESS_MW_BIND: u32 = 1 << 4;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_ZERO_BASED.
pub const IB_UVERBS_ACCESS_ZERO_BASED: u32 = 1 << 5;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_ON_DEMAND.
pub const IB_UVERBS_ACCESS_ON_DEMAND: u32 = 1 << 6;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_HUGETLB.
pub const IB_UVERBS_ACCESS_HUGETLB: u32 = 1 << 7;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_RELAXED_ORDERING.
pub const IB_UVERBS_ACCESS_RELAXED_ORDERING: u32 = IB_UVERBS_ACCESS_OPTIONAL_FIRST;
/// enum ib_uverbs_access_flags: IB_UVERBS_ACCESS_OPTIONAL_RANGE (bits 20..=29).
pub const IB_UVERBS_ACCESS_OPTIONAL_RANGE: u32 =
    ((IB_UVERBS_ACCESS_OPTIONAL_LAST << 1) - 1) & !(IB_UVERBS_ACCESS_OPTIONAL_FIRST - 1);

/// enum ib_uverbs_srq_type: IB_UVERBS_SRQT_BASIC.
pub const IB_UVERBS_SRQT_BASIC: u32 = 0;
/// enum ib_uverbs_srq_type: IB_UVERBS_SRQT_XRC.
pub const IB_UVERBS_SRQT_XRC: u32 = 1;
/// enum ib_uverbs_srq_type: IB_UVERBS_SRQT_TM.
pub const IB_UVERBS_SRQT_TM: u32 = 2;

/// enum ib_uverbs_wq_type: IB_UVERBS_WQT_RQ.
pub const IB_UVERBS_WQT_RQ: u32 = 0;

/// enum ib_uverbs_wq_flags: IB_UVERBS_WQ_FLAGS_CVLAN_STRIPPING.
pub const IB_UVERBS_WQ_FLAGS_CVLAN_STRIPPING: u32 = 1 << 0;
/// enum ib_uverbs_wq_flags: IB_UVERBS_WQ_FLAGS_SCATTER_FCS.
pub const IB_UVERBS_WQ_FLAGS_SCATTER_FCS: u32 = 1 << 1;
/// enum ib_uverbs_wq_flags: IB_UVERBS_WQ_FLAGS_DELAY_DROP.
pub const IB_UVERBS_WQ_FLAGS_DELAY_DROP: u32 = 1 << 2;
/// enum ib_uverbs_wq_flags: IB_UVERBS_WQ_FLAGS_PCI_WRITE_END_PADDING.
pub const IB_UVERBS_WQ_FLAGS_PCI_WRITE_END_PADDING: u32 = 1 << 3;

/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_RC.
pub const IB_UVERBS_QPT_RC: u8 = 2;
/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_UC.
pub const IB_UVERBS_QPT_UC: u8 = 3;
/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_UD.
pub const IB_UVERBS_QPT_UD: u8 = 4;
/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_RAW_PACKET.
pub const IB_UVERBS_QPT_RAW_PACKET: u8 = 8;
/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_XRC_INI.
pub const IB_UVERBS_QPT_XRC_INI: u8 = 9;
/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_XRC_TGT.
pub const IB_UVERBS_QPT_XRC_TGT: u8 = 10;
/// enum ib_uverbs_qp_type: IB_UVERBS_QPT_DRIVER (mlx5: DCI/DCT, told apart by MLX5_QP_FLAG_TYPE_*).
pub const IB_UVERBS_QPT_DRIVER: u8 = 0xFF;

/// enum ib_uverbs_qp_create_flags: IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK.
pub const IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: u32 = 1 << 1;
/// enum ib_uverbs_qp_create_flags: IB_UVERBS_QP_CREATE_SCATTER_FCS.
pub const IB_UVERBS_QP_CREATE_SCATTER_FCS: u32 = 1 << 8;
/// enum ib_uverbs_qp_create_flags: IB_UVERBS_QP_CREATE_CVLAN_STRIPPING.
pub const IB_UVERBS_QP_CREATE_CVLAN_STRIPPING: u32 = 1 << 9;
/// enum ib_uverbs_qp_create_flags: IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING.
pub const IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING: u32 = 1 << 11;
/// enum ib_uverbs_qp_create_flags: IB_UVERBS_QP_CREATE_SQ_SIG_ALL.
pub const IB_UVERBS_QP_CREATE_SQ_SIG_ALL: u32 = 1 << 12;

/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_SM.
pub const IB_UVERBS_PCF_SM: u32 = 1 << 1;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_NOTICE_SUP.
pub const IB_UVERBS_PCF_NOTICE_SUP: u32 = 1 << 2;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_TRAP_SUP.
pub const IB_UVERBS_PCF_TRAP_SUP: u32 = 1 << 3;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_OPT_IPD_SUP.
pub const IB_UVERBS_PCF_OPT_IPD_SUP: u32 = 1 << 4;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_AUTO_MIGR_SUP.
pub const IB_UVERBS_PCF_AUTO_MIGR_SUP: u32 = 1 << 5;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_SL_MAP_SUP.
pub const IB_UVERBS_PCF_SL_MAP_SUP: u32 = 1 << 6;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_MKEY_NVRAM.
pub const IB_UVERBS_PCF_MKEY_NVRAM: u32 = 1 << 7;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_PKEY_NVRAM.
pub const IB_UVERBS_PCF_PKEY_NVRAM: u32 = 1 << 8;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_LED_INFO_SUP.
pub const IB_UVERBS_PCF_LED_INFO_SUP: u32 = 1 << 9;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_SM_DISABLED.
pub const IB_UVERBS_PCF_SM_DISABLED: u32 = 1 << 10;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_SYS_IMAGE_GUID_SUP.
pub const IB_UVERBS_PCF_SYS_IMAGE_GUID_SUP: u32 = 1 << 11;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_PKEY_SW_EXT_PORT_TRAP_SUP.
pub const IB_UVERBS_PCF_PKEY_SW_EXT_PORT_TRAP_SUP: u32 = 1 << 12;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_EXTENDED_SPEEDS_SUP.
pub const IB_UVERBS_PCF_EXTENDED_SPEEDS_SUP: u32 = 1 << 14;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_CM_SUP.
pub const IB_UVERBS_PCF_CM_SUP: u32 = 1 << 16;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_SNMP_TUNNEL_SUP.
pub const IB_UVERBS_PCF_SNMP_TUNNEL_SUP: u32 = 1 << 17;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_REINIT_SUP.
pub const IB_UVERBS_PCF_REINIT_SUP: u32 = 1 << 18;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_DEVICE_MGMT_SUP.
pub const IB_UVERBS_PCF_DEVICE_MGMT_SUP: u32 = 1 << 19;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_VENDOR_CLASS_SUP.
pub const IB_UVERBS_PCF_VENDOR_CLASS_SUP: u32 = 1 << 20;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_DR_NOTICE_SUP.
pub const IB_UVERBS_PCF_DR_NOTICE_SUP: u32 = 1 << 21;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_CAP_MASK_NOTICE_SUP.
pub const IB_UVERBS_PCF_CAP_MASK_NOTICE_SUP: u32 = 1 << 22;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_BOOT_MGMT_SUP.
pub const IB_UVERBS_PCF_BOOT_MGMT_SUP: u32 = 1 << 23;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_LINK_LATENCY_SUP.
pub const IB_UVERBS_PCF_LINK_LATENCY_SUP: u32 = 1 << 24;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_CLIENT_REG_SUP.
pub const IB_UVERBS_PCF_CLIENT_REG_SUP: u32 = 1 << 25;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_LINK_SPEED_WIDTH_TABLE_SUP.
pub const IB_UVERBS_PCF_LINK_SPEED_WIDTH_TABLE_SUP: u32 = 1 << 27;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_VENDOR_SPECIFIC_MADS_TABLE_SUP.
pub const IB_UVERBS_PCF_VENDOR_SPECIFIC_MADS_TABLE_SUP: u32 = 1 << 28;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_MCAST_PKEY_TRAP_SUPPRESSION_SUP.
pub const IB_UVERBS_PCF_MCAST_PKEY_TRAP_SUPPRESSION_SUP: u32 = 1 << 29;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_MCAST_FDB_TOP_SUP.
pub const IB_UVERBS_PCF_MCAST_FDB_TOP_SUP: u32 = 1 << 30;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_HIERARCHY_INFO_SUP.
pub const IB_UVERBS_PCF_HIERARCHY_INFO_SUP: u32 = 1 << 31;
/// enum ib_uverbs_query_port_cap_flags: IB_UVERBS_PCF_IP_BASED_GIDS (internal, not an IBA flag).
pub const IB_UVERBS_PCF_IP_BASED_GIDS: u32 = 1 << 26;

/// enum ib_uverbs_query_port_flags: IB_UVERBS_QPF_GRH_REQUIRED.
pub const IB_UVERBS_QPF_GRH_REQUIRED: u8 = 1 << 0;

/// enum ib_uverbs_flow_action_esp_keymat: IB_UVERBS_FLOW_ACTION_ESP_KEYMAT_AES_GCM.
pub const IB_UVERBS_FLOW_ACTION_ESP_KEYMAT_AES_GCM: u32 = 0;

/// enum ib_uverbs_flow_action_esp_keymat_aes_gcm_iv_algo: IB_UVERBS_FLOW_ACTION_IV_ALGO_SEQ.
pub const IB_UVERBS_FLOW_ACTION_IV_ALGO_SEQ: u32 = 0;

/// struct ib_uverbs_flow_action_esp_keymat_aes_gcm (ib_user_ioctl_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_flow_action_esp_keymat_aes_gcm {
    /// Initial IV.
    pub iv: u64,
    /// enum ib_uverbs_flow_action_esp_keymat_aes_gcm_iv_algo.
    pub iv_algo: u32,
    /// Salt.
    pub salt: u32,
    /// ICV length.
    pub icv_len: u32,
    /// Key length.
    pub key_len: u32,
    /// AES key (256 bits).
    pub aes_key: [u32; 8],
}

/// enum ib_uverbs_flow_action_esp_replay: IB_UVERBS_FLOW_ACTION_ESP_REPLAY_NONE.
pub const IB_UVERBS_FLOW_ACTION_ESP_REPLAY_NONE: u32 = 0;
/// enum ib_uverbs_flow_action_esp_replay: IB_UVERBS_FLOW_ACTION_ESP_REPLAY_BMP.
pub const IB_UVERBS_FLOW_ACTION_ESP_REPLAY_BMP: u32 = 1;

/// struct ib_uverbs_flow_action_esp_replay_bmp (ib_user_ioctl_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_flow_action_esp_replay_bmp {
    /// Replay window size.
    pub size: u32,
}

/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_INLINE_CRYPTO.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_INLINE_CRYPTO: u32 = 0;
/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_FULL_OFFLOAD.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_FULL_OFFLOAD: u32 = 1 << 0;
/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_TUNNEL.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_TUNNEL: u32 = 0;
/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_TRANSPORT.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_TRANSPORT: u32 = 1 << 1;
/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_DECRYPT.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_DECRYPT: u32 = 0;
/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_ENCRYPT.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_ENCRYPT: u32 = 1 << 2;
/// enum ib_uverbs_flow_action_esp_flags: IB_UVERBS_FLOW_ACTION_ESP_FLAGS_ESN_NEW_WINDOW.
pub const IB_UVERBS_FLOW_ACTION_ESP_FLAGS_ESN_NEW_WINDOW: u32 = 1 << 3;

/// struct ib_uverbs_flow_action_esp (ib_user_ioctl_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_flow_action_esp {
    /// SPI.
    pub spi: u32,
    /// Sequence number.
    pub seq: u32,
    /// TFC padding.
    pub tfc_pad: u32,
    /// enum ib_uverbs_flow_action_esp_flags.
    pub flags: u32,
    /// Hard packet limit.
    pub hard_limit_pkts: u64,
}

/// enum ib_uverbs_read_counters_flags: IB_UVERBS_READ_COUNTERS_PREFER_CACHED.
pub const IB_UVERBS_READ_COUNTERS_PREFER_CACHED: u32 = 1 << 0;

/// enum ib_uverbs_advise_mr_advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH.
pub const IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH: u32 = 0;
/// enum ib_uverbs_advise_mr_advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE.
pub const IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE: u32 = 1;
/// enum ib_uverbs_advise_mr_advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT.
pub const IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT: u32 = 2;

/// enum ib_uverbs_advise_mr_flag: IB_UVERBS_ADVISE_MR_FLAG_FLUSH.
pub const IB_UVERBS_ADVISE_MR_FLAG_FLUSH: u32 = 1 << 0;

/// struct ib_uverbs_query_port_resp_ex (ib_user_ioctl_verbs.h): UVERBS_ATTR_QUERY_PORT_RESP.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_port_resp_ex {
    /// The write() command's response.
    pub legacy_resp: super::ib_user_verbs::ib_uverbs_query_port_resp,
    /// Capability mask 2.
    pub port_cap_flags2: u16,
    /// Reserved.
    pub reserved: [u8; 6],
}

/// struct ib_uverbs_qp_cap (ib_user_ioctl_verbs.h): UVERBS_ATTR_CREATE_QP_CAP / _RESP_CAP.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_qp_cap {
    /// Max send WRs.
    pub max_send_wr: u32,
    /// Max receive WRs.
    pub max_recv_wr: u32,
    /// Max send SGEs.
    pub max_send_sge: u32,
    /// Max receive SGEs.
    pub max_recv_sge: u32,
    /// Max inline data.
    pub max_inline_data: u32,
}

/// enum rdma_driver_id: RDMA_DRIVER_UNKNOWN.
pub const RDMA_DRIVER_UNKNOWN: u32 = 0;
/// enum rdma_driver_id: RDMA_DRIVER_MLX5.
pub const RDMA_DRIVER_MLX5: u32 = 1;
/// enum rdma_driver_id: RDMA_DRIVER_MLX4.
pub const RDMA_DRIVER_MLX4: u32 = 2;
/// enum rdma_driver_id: RDMA_DRIVER_CXGB3.
pub const RDMA_DRIVER_CXGB3: u32 = 3;
/// enum rdma_driver_id: RDMA_DRIVER_CXGB4.
pub const RDMA_DRIVER_CXGB4: u32 = 4;
/// enum rdma_driver_id: RDMA_DRIVER_MTHCA.
pub const RDMA_DRIVER_MTHCA: u32 = 5;
/// enum rdma_driver_id: RDMA_DRIVER_BNXT_RE.
pub const RDMA_DRIVER_BNXT_RE: u32 = 6;
/// enum rdma_driver_id: RDMA_DRIVER_OCRDMA.
pub const RDMA_DRIVER_OCRDMA: u32 = 7;
/// enum rdma_driver_id: RDMA_DRIVER_NES.
pub const RDMA_DRIVER_NES: u32 = 8;
/// enum rdma_driver_id: RDMA_DRIVER_I40IW.
pub const RDMA_DRIVER_I40IW: u32 = 9;
/// enum rdma_driver_id: RDMA_DRIVER_IRDMA.
pub const RDMA_DRIVER_IRDMA: u32 = RDMA_DRIVER_I40IW;
/// enum rdma_driver_id: RDMA_DRIVER_VMW_PVRDMA.
pub const RDMA_DRIVER_VMW_PVRDMA: u32 = 10;
/// enum rdma_driver_id: RDMA_DRIVER_QEDR.
pub const RDMA_DRIVER_QEDR: u32 = 11;
/// enum rdma_driver_id: RDMA_DRIVER_HNS.
pub const RDMA_DRIVER_HNS: u32 = 12;
/// enum rdma_driver_id: RDMA_DRIVER_USNIC.
pub const RDMA_DRIVER_USNIC: u32 = 13;
/// enum rdma_driver_id: RDMA_DRIVER_RXE.
pub const RDMA_DRIVER_RXE: u32 = 14;
/// enum rdma_driver_id: RDMA_DRIVER_HFI1.
pub const RDMA_DRIVER_HFI1: u32 = 15;
/// enum rdma_driver_id: RDMA_DRIVER_QIB.
pub const RDMA_DRIVER_QIB: u32 = 16;
/// enum rdma_driver_id: RDMA_DRIVER_EFA.
pub const RDMA_DRIVER_EFA: u32 = 17;
/// enum rdma_driver_id: RDMA_DRIVER_SIW.
pub const RDMA_DRIVER_SIW: u32 = 18;
/// enum rdma_driver_id: RDMA_DRIVER_ERDMA.
pub const RDMA_DRIVER_ERDMA: u32 = 19;

/// enum ib_uverbs_gid_type: IB_UVERBS_GID_TYPE_IB.
pub const IB_UVERBS_GID_TYPE_IB: u32 = 0;
/// enum ib_uverbs_gid_type: IB_UVERBS_GID_TYPE_ROCE_V1.
pub const IB_UVERBS_GID_TYPE_ROCE_V1: u32 = 1;
/// enum ib_uverbs_gid_type: IB_UVERBS_GID_TYPE_ROCE_V2.
pub const IB_UVERBS_GID_TYPE_ROCE_V2: u32 = 2;

/// struct ib_uverbs_gid_entry (ib_user_ioctl_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_gid_entry {
    /// The GID, as two raw 8-byte words in memory order.
    pub gid: [u64; 2],
    /// GID table index.
    pub gid_index: u32,
    /// Port number.
    pub port_num: u32,
    /// enum ib_uverbs_gid_type.
    pub gid_type: u32,
    /// ifindex of the associated netdev, 0 if none.
    pub netdev_ifindex: u32,
}

// ---- mlx5_user_ioctl_verbs.h ---------------------------------------------------------------------

/// enum mlx5_ib_uapi_flow_action_flags: MLX5_IB_UAPI_FLOW_ACTION_FLAGS_REQUIRE_METADATA.
pub const MLX5_IB_UAPI_FLOW_ACTION_FLAGS_REQUIRE_METADATA: u32 = 1 << 0;

/// enum mlx5_ib_uapi_flow_table_type: MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX.
pub const MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX: u32 = 0x0;
/// enum mlx5_ib_uapi_flow_table_type: MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_TX.
pub const MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_TX: u32 = 0x1;
/// enum mlx5_ib_uapi_flow_table_type: MLX5_IB_UAPI_FLOW_TABLE_TYPE_FDB.
pub const MLX5_IB_UAPI_FLOW_TABLE_TYPE_FDB: u32 = 0x2;
/// enum mlx5_ib_uapi_flow_table_type: MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_RX.
pub const MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_RX: u32 = 0x3;
/// enum mlx5_ib_uapi_flow_table_type: MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_TX.
pub const MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_TX: u32 = 0x4;

/// enum mlx5_ib_uapi_flow_action_packet_reformat_type: L2_TUNNEL_TO_L2.
pub const MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2: u32 = 0x0;
/// enum mlx5_ib_uapi_flow_action_packet_reformat_type: L2_TO_L2_TUNNEL.
pub const MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL: u32 = 0x1;
/// enum mlx5_ib_uapi_flow_action_packet_reformat_type: L3_TUNNEL_TO_L2.
pub const MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2: u32 = 0x2;
/// enum mlx5_ib_uapi_flow_action_packet_reformat_type: L2_TO_L3_TUNNEL.
pub const MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL: u32 = 0x3;

/// struct mlx5_ib_uapi_devx_async_cmd_hdr (mlx5_user_ioctl_verbs.h); `__u8 out_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_uapi_devx_async_cmd_hdr {
    /// The caller's work request id.
    pub wr_id: u64,
}

/// enum mlx5_ib_uapi_dm_type: MLX5_IB_UAPI_DM_TYPE_MEMIC.
pub const MLX5_IB_UAPI_DM_TYPE_MEMIC: u32 = 0;
/// enum mlx5_ib_uapi_dm_type: MLX5_IB_UAPI_DM_TYPE_STEERING_SW_ICM.
pub const MLX5_IB_UAPI_DM_TYPE_STEERING_SW_ICM: u32 = 1;
/// enum mlx5_ib_uapi_dm_type: MLX5_IB_UAPI_DM_TYPE_HEADER_MODIFY_SW_ICM.
pub const MLX5_IB_UAPI_DM_TYPE_HEADER_MODIFY_SW_ICM: u32 = 2;
/// enum mlx5_ib_uapi_dm_type: MLX5_IB_UAPI_DM_TYPE_HEADER_MODIFY_PATTERN_SW_ICM.
pub const MLX5_IB_UAPI_DM_TYPE_HEADER_MODIFY_PATTERN_SW_ICM: u32 = 3;

/// enum mlx5_ib_uapi_devx_create_event_channel_flags: MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA.
pub const MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA: u32 = 1 << 0;

/// struct mlx5_ib_uapi_devx_async_event_hdr (mlx5_user_ioctl_verbs.h); `__u8 out_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_uapi_devx_async_event_hdr {
    /// The subscription's cookie.
    pub cookie: u64,
}

/// enum mlx5_ib_uapi_pp_alloc_flags: MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX.
pub const MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX: u32 = 1 << 0;

/// enum mlx5_ib_uapi_uar_alloc_type: MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF.
pub const MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF: u32 = 0x0;
/// enum mlx5_ib_uapi_uar_alloc_type: MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC.
pub const MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC: u32 = 0x1;

/// enum mlx5_ib_uapi_query_port_flags: MLX5_IB_UAPI_QUERY_PORT_VPORT.
pub const MLX5_IB_UAPI_QUERY_PORT_VPORT: u64 = 1 << 0;
/// enum mlx5_ib_uapi_query_port_flags: MLX5_IB_UAPI_QUERY_PORT_VPORT_VHCA_ID.
pub const MLX5_IB_UAPI_QUERY_PORT_VPORT_VHCA_ID: u64 = 1 << 1;
/// enum mlx5_ib_uapi_query_port_flags: MLX5_IB_UAPI_QUERY_PORT_VPORT_STEERING_ICM_RX.
pub const MLX5_IB_UAPI_QUERY_PORT_VPORT_STEERING_ICM_RX: u64 = 1 << 2;
/// enum mlx5_ib_uapi_query_port_flags: MLX5_IB_UAPI_QUERY_PORT_VPORT_STEERING_ICM_TX.
pub const MLX5_IB_UAPI_QUERY_PORT_VPORT_STEERING_ICM_TX: u64 = 1 << 3;
/// enum mlx5_ib_uapi_query_port_flags: MLX5_IB_UAPI_QUERY_PORT_VPORT_REG_C0.
pub const MLX5_IB_UAPI_QUERY_PORT_VPORT_REG_C0: u64 = 1 << 4;
/// enum mlx5_ib_uapi_query_port_flags: MLX5_IB_UAPI_QUERY_PORT_ESW_OWNER_VHCA_ID.
pub const MLX5_IB_UAPI_QUERY_PORT_ESW_OWNER_VHCA_ID: u64 = 1 << 5;

/// struct mlx5_ib_uapi_reg (mlx5_user_ioctl_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_uapi_reg {
    /// Value.
    pub value: u32,
    /// Mask.
    pub mask: u32,
}

/// struct mlx5_ib_uapi_query_port (mlx5_user_ioctl_verbs.h): MLX5_IB_ATTR_QUERY_PORT.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_uapi_query_port {
    /// enum mlx5_ib_uapi_query_port_flags.
    pub flags: u64,
    /// vport number.
    pub vport: u16,
    /// vport VHCA id.
    pub vport_vhca_id: u16,
    /// E-switch owner VHCA id.
    pub esw_owner_vhca_id: u16,
    /// Reserved.
    pub rsvd0: u16,
    /// vport RX steering ICM address.
    pub vport_steering_icm_rx: u64,
    /// vport TX steering ICM address.
    pub vport_steering_icm_tx: u64,
    /// Metadata register C0.
    pub reg_c0: mlx5_ib_uapi_reg,
}
