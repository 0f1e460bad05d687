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

/// The bounds both sides are told, by the same flags: the server keeps them, the client's
/// `--chaos` proves them. Each field is the flag's value (`--max-uploads`, ...).
pub struct Bounds {
    pub max_uploads: u64,
    pub max_part_bytes: u64,
    pub max_receiving_bytes: u64,
    pub max_stored_bytes: u64,
    pub upload_idle_secs: u64,
    pub send_timeout_secs: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_uploads: MAX_UPLOADS,
            max_part_bytes: MAX_PART_BYTES,
            max_receiving_bytes: MAX_RECEIVING_BYTES,
            max_stored_bytes: MAX_STORED_BYTES,
            upload_idle_secs: UPLOAD_IDLE_SECS,
            send_timeout_secs: SEND_TIMEOUT_SECS,
        }
    }
}

impl Bounds {
    /// The bound `flag` sets, if it names one.
    pub fn slot(&mut self, flag: &str) -> Option<&mut u64> {
        match flag {
            "--max-uploads" => Some(&mut self.max_uploads),
            "--max-part-bytes" => Some(&mut self.max_part_bytes),
            "--max-receiving-bytes" => Some(&mut self.max_receiving_bytes),
            "--max-stored-bytes" => Some(&mut self.max_stored_bytes),
            "--upload-idle-secs" => Some(&mut self.upload_idle_secs),
            "--send-timeout-secs" => Some(&mut self.send_timeout_secs),
            _ => None,
        }
    }
}
