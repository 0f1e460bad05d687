//! The crate's one error type: the operation, the errno, and a sentence a person can act on.

use std::borrow::Cow;
use std::ffi::CStr;
use std::fmt;
use std::ptr::NonNull;

/// Result of this crate's operations.
pub type Result<T> = std::result::Result<T, Error>;

/// A failed verbs or mlx5dv operation.
///
/// Carries the C operation that failed, the errno the library reported (never 0: a call that
/// failed without setting errno has none), and what to do about it.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Repr);

/// One pointer: a `&'static Inner` (low bit 0) or a boxed `Inner` (low bit 1). So
/// `Result<(), Error>` is one register on the post path (`Ok` is null), dropping it is one bit
/// test (only the boxed form owns anything), and the refusals a post path returns in normal
/// operation (EAGAIN backpressure) are statics: refusing allocates nothing.
struct Repr(NonNull<Inner>);

// SAFETY: Repr owns a Box<Inner> or borrows a static Inner; Inner is Send and Sync.
unsafe impl Send for Repr {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for Repr {}

impl Repr {
    fn boxed(inner: Box<Inner>) -> Repr {
        let tagged = Box::into_raw(inner).cast::<u8>().wrapping_add(1).cast::<Inner>();
        // SAFETY: a Box pointer plus one is not null; Inner's alignment (8) keeps bit 0 free.
        Repr(unsafe { NonNull::new_unchecked(tagged) })
    }

    const fn fixed(inner: &'static Inner) -> Repr {
        // SAFETY: a reference is not null.
        Repr(unsafe { NonNull::new_unchecked((inner as *const Inner).cast_mut()) })
    }

    /// The pointer without its tag.
    #[inline]
    fn untagged(&self) -> *mut Inner {
        self.0.as_ptr().cast::<u8>().wrapping_sub(self.tag()).cast::<Inner>()
    }

    #[inline]
    fn tag(&self) -> usize {
        self.0.as_ptr() as usize & 1
    }
}

impl std::ops::Deref for Repr {
    type Target = Inner;
    #[inline]
    fn deref(&self) -> &Inner {
        // SAFETY: untagged, the pointer is a live Box or static Inner (see Repr).
        unsafe { &*self.untagged() }
    }
}

impl Drop for Repr {
    #[inline(always)]
    fn drop(&mut self) {
        // Dropping `Ok(())` or a static refusal is one test; freeing a boxed error stays out of
        // line, so the drop glue of `Result<(), Error>` inlines on the post path.
        if self.tag() == 1 {
            free_boxed(self.untagged());
        }
    }
}

#[cold]
#[inline(never)]
fn free_boxed(inner: *mut Inner) {
    // SAFETY: called once, from Repr's drop, with the untagged pointer of an owned Inner made
    // by Box::into_raw in `Repr::boxed`.
    drop(unsafe { Box::from_raw(inner) });
}

impl Clone for Repr {
    fn clone(&self) -> Repr {
        if self.tag() == 0 {
            Repr(self.0)
        } else {
            Repr::boxed(Box::new((**self).clone()))
        }
    }
}

impl PartialEq for Repr {
    fn eq(&self, other: &Repr) -> bool {
        **self == **other
    }
}

impl Eq for Repr {}

/// An error made without allocating: for [`Error::from_static`].
pub(crate) struct StaticError(Inner);

impl StaticError {
    /// `op` failed with `errno` (non-zero); `hint` says what to do.
    pub(crate) const fn new(op: &'static str, errno: i32, hint: &'static str) -> StaticError {
        StaticError(Inner {
            op,
            device: None,
            errno: Some(errno),
            hint: Cow::Borrowed(hint),
            #[cfg(feature = "cm")]
            cm: None,
        })
    }
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    op: &'static str,
    device: Option<Box<str>>,
    errno: Option<i32>,
    hint: Cow<'static, str>,
    /// How a connection-manager handshake ended, when that is what failed.
    #[cfg(feature = "cm")]
    cm: Option<crate::cm::CmFailure>,
}

/// What EIO (or ENOLINK) from a command on a device means: once a device fails for good (a
/// firmware fatal error, a PCI error) or is unplugged, the kernel disassociates every context
/// open on it and answers every command but the destroys with EIO (uverbs_main.c:
/// `ib_uverbs_write` and the ioctl path find no device); before that, mlx5_core answers the
/// commands of a device in its internal-error state with EIO (ENOLINK in newer kernels:
/// `mlx5_internal_err_ret_value`), and a firmware that failed a command internally with EIO
/// (`cmd_status_to_err`). No limit to raise, no permission to grant: the device is gone, or
/// failed.
pub(crate) const DEVICE_GONE: &str = "the device is gone or failed (a fatal error, a PCI error or a hot unplug \
    disassociated the context, whose objects now only free themselves): nothing to raise or retry here; open the \
    device again (a new Context, and everything made from it) once it is back";

impl Error {
    /// An error from an errno value returned by the library (0 counts as "no errno").
    pub(crate) fn from_errno(op: &'static str, errno: i32, hint: impl Into<Cow<'static, str>>) -> Self {
        Error(Repr::boxed(Box::new(Inner {
            op,
            device: None,
            errno: (errno > 0).then_some(errno),
            hint: hint.into(),
            #[cfg(feature = "cm")]
            cm: None,
        })))
    }

    /// An error kept in a static: making it allocates nothing.
    #[inline]
    pub(crate) const fn from_static(e: &'static StaticError) -> Self {
        Error(Repr::fixed(&e.0))
    }

    fn inner_mut(&mut self) -> &mut Inner {
        if self.0.tag() == 0 {
            self.0 = Repr::boxed(Box::new((*self.0).clone()));
        }
        // SAFETY: boxed now: the Inner this Error owns, borrowed mutably through &mut self.
        unsafe { &mut *self.0.untagged() }
    }

    /// A caller mistake found before calling the library (reported as EINVAL).
    pub(crate) fn invalid(op: &'static str, hint: impl Into<Cow<'static, str>>) -> Self {
        Self::from_errno(op, libc::EINVAL, hint)
    }

    /// An error from the calling thread's `errno`, for library calls that return NULL or -1
    /// (the kernel's commands on a device: [`Error::command`]).
    pub(crate) fn last_os_error(op: &'static str, hint: impl Into<Cow<'static, str>>) -> Self {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        Self::command(op, errno, hint)
    }

    /// A command on a device that failed with `errno`: `hint` says what to do, except for EIO
    /// and ENOLINK, which say the device is gone ([`DEVICE_GONE`]) whatever the command.
    pub(crate) fn command(op: &'static str, errno: i32, hint: impl Into<Cow<'static, str>>) -> Self {
        if errno == libc::EIO || errno == libc::ENOLINK {
            return Self::from_errno(op, errno, DEVICE_GONE);
        }
        Self::from_errno(op, errno, hint)
    }

    /// The same error (operation, device, errno) with `more` said after its hint.
    pub(crate) fn adding(&self, more: impl fmt::Display) -> Self {
        let mut inner = (*self.0).clone();
        inner.hint = if inner.hint.is_empty() {
            more.to_string().into()
        } else {
            format!("{}; {more}", inner.hint).into()
        };
        Error(Repr::boxed(Box::new(inner)))
    }

    /// Names the device the operation ran on.
    pub(crate) fn on(mut self, device: &str) -> Self {
        self.inner_mut().device = Some(device.into());
        self
    }

    /// Attaches the connection manager's account of what happened.
    #[cfg(feature = "cm")]
    pub(crate) fn with_cm(mut self, failure: crate::cm::CmFailure) -> Self {
        self.inner_mut().cm = Some(failure);
        self
    }

    /// What ended a connection-manager handshake (rejected with its reason and private data,
    /// unreachable, timed out, ...), when the error comes from one.
    #[cfg(feature = "cm")]
    pub fn cm_failure(&self) -> Option<&crate::cm::CmFailure> {
        self.0.cm.as_ref()
    }

    /// The C function that failed, e.g. `ibv_get_device_list`.
    pub fn op(&self) -> &'static str {
        self.0.op
    }

    /// The device it ran on, when known.
    pub fn device(&self) -> Option<&str> {
        self.0.device.as_deref()
    }

    /// The errno the library reported, if it set one.
    pub fn errno(&self) -> Option<i32> {
        self.0.errno
    }

    /// What to do about it.
    pub fn hint(&self) -> &str {
        &self.0.hint
    }

    /// Whether the library said "operation not supported" (EOPNOTSUPP), e.g. DC on a
    /// device that is not mlx5.
    pub fn is_not_supported(&self) -> bool {
        self.0.errno == Some(libc::EOPNOTSUPP)
    }

    /// Whether this is backpressure (EAGAIN / EWOULDBLOCK): nothing was done, poll and try
    /// again.
    pub fn is_would_block(&self) -> bool {
        self.0.errno == Some(libc::EAGAIN) || self.0.errno == Some(libc::EWOULDBLOCK)
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
        write!(f, "{}", self.0.op)?;
        if let Some(device) = &self.0.device {
            write!(f, " on {device}")?;
        }
        match self.0.errno {
            Some(errno) => write!(f, ": {} (errno {errno})", strerror(errno))?,
            None => write!(f, ": failed without reporting an errno")?,
        }
        if !self.0.hint.is_empty() {
            write!(f, ": {}", self.0.hint)?;
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

/// A malformed or unencodable address blob (see [`crate::addr`]) as this crate's error:
/// operation `mlx5dv::addr`, EINVAL, and the [`AddrError`](crate::addr::AddrError)'s own
/// sentence, so `?` works on `encode()`/`decode()` in a function returning [`Result`].
impl From<crate::addr::AddrError> for Error {
    fn from(e: crate::addr::AddrError) -> Self {
        Error::invalid(
            "mlx5dv::addr",
            format!("{e}: the address blob must come from encode() of this crate's format version, unmodified"),
        )
    }
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e.0.errno {
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
    fn display_names_the_device_when_known() {
        let e = Error::from_errno("mlx5dv_create_qp (DCI)", libc::EOPNOTSUPP, "rxe0 is not an mlx5 device").on("rxe0");
        assert!(e.to_string().starts_with("mlx5dv_create_qp (DCI) on rxe0: "), "{e}");
        assert!(e.is_not_supported());
        assert_eq!(e.device(), Some("rxe0"));
    }

    #[test]
    fn eio_or_enolink_from_a_command_says_the_device_is_gone_whatever_the_hint() {
        for errno in [libc::EIO, libc::ENOLINK] {
            let e = Error::command("ibv_reg_mr", errno, "raise the locked-memory limit (ulimit -l)");
            assert_eq!((e.errno(), e.hint()), (Some(errno), DEVICE_GONE), "{e}");
        }
        let e = Error::command("ibv_reg_mr", libc::ENOMEM, "raise the locked-memory limit (ulimit -l)");
        assert_eq!(e.hint(), "raise the locked-memory limit (ulimit -l)");
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
    fn a_static_error_reads_like_any_other_and_can_still_name_a_device() {
        static BUSY: StaticError = StaticError::new("DciPool::post", libc::EAGAIN, "poll and try again");
        let e = Error::from_static(&BUSY);
        assert!(e.is_would_block());
        assert_eq!((e.op(), e.hint()), ("DciPool::post", "poll and try again"));
        let e = e.on("mlx5_0");
        assert_eq!(e.device(), Some("mlx5_0"));
        assert_eq!(Error::from_static(&BUSY).device(), None, "the static is untouched");
    }

    #[test]
    fn an_error_is_one_pointer_wide_and_so_is_a_result_of_unit() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Result<()>>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn converts_to_io_error_with_matching_kind() {
        let io: std::io::Error = Error::from_errno("ibv_reg_mr", libc::ENOMEM, "").into();
        assert_eq!(io.kind(), std::io::ErrorKind::OutOfMemory);
    }

    #[test]
    fn an_addr_error_converts_with_question_mark_into_an_einval_error_keeping_its_sentence() {
        fn decode(blob: &[u8]) -> Result<crate::DcTargetAddr> {
            Ok(crate::DcTargetAddr::decode(blob)?)
        }
        let e = decode(&[0; 3]).unwrap_err();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert_eq!(e.op(), "mlx5dv::addr");
        let sentence = crate::DcTargetAddr::decode(&[0; 3]).unwrap_err().to_string();
        assert!(e.hint().contains(&sentence), "{e}");
    }
}
