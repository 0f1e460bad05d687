//! The crate's one error type: the operation, the errno, and a sentence a person can act on.

use std::ffi::CStr;
use std::fmt;

/// Result of this crate's operations.
pub type Result<T> = std::result::Result<T, Error>;

/// A failed verbs or mlx5dv operation.
///
/// Carries the C operation that failed, the errno the library reported (never 0: a call that
/// failed without setting errno has none), and what to do about it.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    op: &'static str,
    errno: Option<i32>,
    hint: &'static str,
}

impl Error {
    /// An error from an errno value returned by the library (0 counts as "no errno").
    pub(crate) fn from_errno(op: &'static str, errno: i32, hint: &'static str) -> Self {
        Error {
            op,
            errno: (errno > 0).then_some(errno),
            hint,
        }
    }

    /// An error from the calling thread's `errno`, for calls that return NULL or -1.
    pub(crate) fn last_os_error(op: &'static str, hint: &'static str) -> Self {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        Self::from_errno(op, errno, hint)
    }

    /// The C function that failed, e.g. `ibv_get_device_list`.
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// The errno the library reported, if it set one.
    pub fn errno(&self) -> Option<i32> {
        self.errno
    }

    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        self.hint
    }
}

fn strerror(errno: i32) -> String {
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: buf is writable for its length; the XSI strerror_r NUL-terminates on success.
    let rc = unsafe { libc::strerror_r(errno, buf.as_mut_ptr(), buf.len()) };
    if rc != 0 {
        return format!("errno {errno}");
    }
    // SAFETY: strerror_r succeeded, so buf holds a NUL-terminated string.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.errno {
            Some(errno) => write!(f, "{}: {} (errno {errno})", self.op, strerror(errno))?,
            None => write!(f, "{}: failed without reporting an errno", self.op)?,
        }
        if !self.hint.is_empty() {
            write!(f, ": {}", self.hint)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e.errno {
            Some(errno) => std::io::Error::new(std::io::Error::from_raw_os_error(errno).kind(), e),
            None => std::io::Error::other(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_operation_errno_text_and_hint() {
        let e = Error::from_errno("mlx5dv_create_qp", libc::EOPNOTSUPP, "rxe0 is not an mlx5 device");
        let text = e.to_string();
        assert!(text.starts_with("mlx5dv_create_qp: "), "{text}");
        assert!(text.contains(&format!("(errno {})", libc::EOPNOTSUPP)), "{text}");
        assert!(text.ends_with(": rxe0 is not an mlx5 device"), "{text}");
        assert_eq!(e.errno(), Some(libc::EOPNOTSUPP));
    }

    #[test]
    fn errno_zero_is_never_reported_as_a_cause() {
        let e = Error::from_errno("mlx5dv_create_qp", 0, "check the attributes");
        assert_eq!(e.errno(), None);
        assert_eq!(
            e.to_string(),
            "mlx5dv_create_qp: failed without reporting an errno: check the attributes"
        );
    }

    #[test]
    fn converts_to_io_error_with_matching_kind() {
        let io: std::io::Error = Error::from_errno("ibv_reg_mr", libc::ENOMEM, "").into();
        assert_eq!(io.kind(), std::io::ErrorKind::OutOfMemory);
    }
}
