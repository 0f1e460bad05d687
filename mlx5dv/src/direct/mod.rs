//! The direct backend: WQEs written straight into a DCI's send queue, and its completions
//! read straight from a CQ that only direct QPs use.

// The CQ half's modules (issue 17); the send half owns the rest of this file.
pub(crate) mod cq_ring;
pub(crate) mod cqe;
pub(crate) mod probe;
