//! The s3s server's default bounds (its `--help` says what each bounds), shared with the
//! client, whose `--chaos` proves them.

/// Multipart uploads open at once (`--max-uploads`).
pub const MAX_UPLOADS: u64 = 1000;
/// Bytes held by the uploaded parts of open multipart uploads (`--max-part-bytes`).
pub const MAX_PART_BYTES: u64 = 2 << 30;
/// Bytes being received at once by PUTs and parts (`--max-receiving-bytes`).
pub const MAX_RECEIVING_BYTES: u64 = 1 << 30;
