//! The s3s server's default bounds (its `--help` says what each bounds), shared with the
//! client, whose `--chaos` proves them.

/// Multipart uploads open at once (`--max-uploads`).
pub const MAX_UPLOADS: u64 = 1000;
/// Bytes held by the uploaded parts of open multipart uploads (`--max-part-bytes`).
pub const MAX_PART_BYTES: u64 = 2 << 30;
/// Bytes being received at once by PUTs and parts (`--max-receiving-bytes`).
pub const MAX_RECEIVING_BYTES: u64 = 1 << 30;
/// Bytes of stored objects, completed multipart objects included (`--max-stored-bytes`):
/// 4 GiB. The objects are in memory, so the bound is of the machine's memory: with the other
/// bounds' defaults the server holds at most 7 GiB of clients' bytes, which a test machine or
/// a small server has, and 4 GiB is sixteen times what the CI's 4 clients, each holding one
/// object of up to 64 MiB at a time, need.
pub const MAX_STORED_BYTES: u64 = 4 << 30;
/// Seconds after which a multipart upload no request named is abandoned and aborted
/// (`--upload-idle-secs`): 10 minutes. S3 leaves it to a lifecycle rule counted in days and
/// MinIO cleans up after 24 hours, for uploads of terabytes over slow links; this server
/// holds parts in memory and takes at most 64 MiB a part by RDMA, which a client sends in
/// seconds, so a client 10 minutes silent within an upload has left it, while 1000 abandoned
/// uploads (`--max-uploads`) lock multipart out for no longer than that.
pub const UPLOAD_IDLE_SECS: u64 = 600;
/// Seconds a write to a client may wait for it to read (`--send-timeout-secs`): 60, nginx's
/// `send_timeout`. A client that reads nothing for that long has its connection closed, and
/// what its response held (a GET's object, its room in `--max-stored-bytes`) is let go; a slow
/// reader that keeps reading is never cut.
pub const SEND_TIMEOUT_SECS: u64 = 60;
