//! Page pinning at REG_MR as Linux does it: `ib_umem_get` (drivers/infiniband/core/umem.c)
//! pins the range with `pin_user_pages_fast(FOLL_LONGTERM | FOLL_WRITE when writable)`, where
//! writable is `ib_access_writable` (LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC, MW_BIND). Since
//! Linux 6.5, mm/gup.c `check_vma_flags` refuses such a write pin with EFAULT when
//! `writable_file_mapping_allowed` says no: a long-term pin of a shared, writable mapping of a
//! file the kernel must track dirty pages for (`vma_needs_dirty_tracking`: a filesystem with
//! `page_mkwrite` or writeback, e.g. ext4, xfs, btrfs, overlayfs over them). tmpfs/shmem
//! (memfd, shared anonymous memory, SysV shm), hugetlbfs and ramfs do no dirty tracking and
//! pass, as do private and anonymous mappings. `check_vma_flags` also refuses a write pin of a
//! mapping without write permission, and the pin fails where the range is not mapped at all.
//! ODP registrations pin nothing (ib_umem_odp_get) and are not checked.
//!
//! The emulator reads the range's VMAs from /proc/self/maps (an MR may span several) and asks
//! statfs(2) which filesystem backs each shared file mapping.

/// IB_ACCESS_* bits that make `ib_access_writable` true.
const WRITABLE: u32 = 1 | (1 << 1) | (1 << 3) | (1 << 4);
/// IB_ACCESS_ON_DEMAND.
const ON_DEMAND: u32 = 1 << 6;

/// statfs f_type values of filesystems without dirty tracking (linux/magic.h).
const TMPFS_MAGIC: i64 = 0x0102_1994;
const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// One line of /proc/self/maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vma {
    /// First address.
    pub start: u64,
    /// First address past it.
    pub end: u64,
    /// `w` in the permissions.
    pub write: bool,
    /// `s` in the permissions (MAP_SHARED).
    pub shared: bool,
    /// The inode number (0: anonymous).
    pub inode: u64,
    /// The path (empty for anonymous memory; may end in " (deleted)").
    pub path: String,
}

/// Parses /proc/self/maps.
pub fn parse_maps(text: &str) -> Vec<Vma> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.splitn(6, ' ');
            let (range, perms) = (f.next()?, f.next()?);
            let (_offset, _dev, inode) = (f.next()?, f.next()?, f.next()?);
            let path = f.next().unwrap_or("").trim_start().to_string();
            let (s, e) = range.split_once('-')?;
            Some(Vma {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                write: perms.as_bytes().get(1) == Some(&b'w'),
                shared: perms.as_bytes().get(3) == Some(&b's'),
                inode: inode.parse().ok()?,
                path,
            })
        })
        .collect()
}

/// The filesystem type (statfs f_type) backing the shared file mapping `v`: through its
/// /proc/self/map_files link (which reaches a deleted file too, where the process may follow
/// it), else through its path, else (a deleted file) through the directory it was in.
fn fs_type(v: &Vma) -> Option<i64> {
    let via_link = format!("/proc/self/map_files/{:x}-{:x}", v.start, v.end);
    let deleted = v.path.strip_suffix(" (deleted)");
    let dir = deleted
        .and_then(|p| std::path::Path::new(p).parent())
        .map(|d| d.to_string_lossy().into_owned());
    let candidates = [Some(via_link), Some(v.path.clone()).filter(|_| deleted.is_none()), dir];
    candidates.into_iter().flatten().find_map(|p| statfs_type(&p))
}

fn statfs_type(path: &str) -> Option<i64> {
    let c = std::ffi::CString::new(path).ok()?;
    // SAFETY: a valid NUL-terminated path and a zeroed statfs the call fills.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    (rc == 0).then_some(st.f_type as i64)
}

/// Whether a shared mapping needs dirty tracking (mm/mmap.c `vma_needs_dirty_tracking`).
/// Shared anonymous memory, memfd and SysV shm are shmem files; their paths name no file
/// statfs can reach once they are gone, so they are told by their names.
fn needs_dirty_tracking(v: &Vma, fs: &dyn Fn(&Vma) -> Option<i64>) -> bool {
    if !v.shared || !v.write || v.inode == 0 {
        return false;
    }
    let shmem_names = ["/dev/zero", "/SYSV", "/memfd:", "/dev/shm/"];
    match fs(v) {
        Some(t) => !matches!(t, TMPFS_MAGIC | HUGETLBFS_MAGIC | RAMFS_MAGIC),
        None => !shmem_names.iter().any(|n| v.path.starts_with(n)),
    }
}

/// What `ib_umem_get` makes of pinning `[start, start+len)` with `access`, given the process's
/// VMAs and a way to learn a mapping's filesystem: EFAULT where mm/gup.c refuses the pin.
pub fn check_range(
    vmas: &[Vma],
    start: u64,
    len: u64,
    access: u32,
    fs: &dyn Fn(&Vma) -> Option<i64>,
) -> Result<(), i32> {
    if access & ON_DEMAND != 0 || len == 0 {
        return Ok(());
    }
    let write = access & WRITABLE != 0;
    let end = start.saturating_add(len);
    let mut at = start;
    let mut sorted: Vec<&Vma> = vmas.iter().filter(|v| v.end > start && v.start < end).collect();
    sorted.sort_by_key(|v| v.start);
    for v in sorted {
        if v.start > at {
            // A hole: nothing to pin there (gup: -EFAULT).
            return Err(libc::EFAULT);
        }
        if write && !v.write {
            // check_vma_flags: a write pin of a mapping without VM_WRITE (no FOLL_FORCE).
            return Err(libc::EFAULT);
        }
        if write && needs_dirty_tracking(v, fs) {
            // check_vma_flags -> writable_file_mapping_allowed: FOLL_PIN | FOLL_LONGTERM of a
            // dirty-tracked shared file mapping.
            crate::log(format_args!(
                "REG_MR {start:#x}+{len:#x}: writable long-term pin of the shared file mapping {} refused (EFAULT)",
                v.path
            ));
            return Err(libc::EFAULT);
        }
        at = at.max(v.end);
        if at >= end {
            return Ok(());
        }
    }
    Err(libc::EFAULT)
}

/// REG_MR's pin of the caller's range, read from /proc/self/maps.
pub fn check(start: u64, len: u64, access: u32) -> Result<(), i32> {
    if access & ON_DEMAND != 0 {
        return Ok(());
    }
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Ok(());
    };
    check_range(&parse_maps(&maps), start, len, access, &fs_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_parse_with_and_without_a_path() {
        let v = parse_maps(
            "7f00-7f10 rw-s 00000000 fe:00 1234                       /data/file (deleted)\n7f10-7f20 rw-p 00000000 00:00 0 \n",
        );
        assert_eq!(v.len(), 2);
        assert!(v[0].shared && v[0].write && v[0].path == "/data/file (deleted)");
        assert!(!v[1].shared && v[1].inode == 0 && v[1].path.is_empty());
    }

    #[test]
    fn a_range_with_a_hole_or_a_read_only_mapping_cannot_be_pinned_for_writing() {
        let vmas = parse_maps("1000-2000 rw-p 00000000 00:00 0\n3000-4000 r--p 00000000 00:00 0\n");
        let fs = |_: &Vma| None;
        assert_eq!(check_range(&vmas, 0x1000, 0x1000, 1, &fs), Ok(()));
        assert_eq!(check_range(&vmas, 0x1000, 0x2800, 0, &fs), Err(libc::EFAULT), "a hole");
        assert_eq!(check_range(&vmas, 0x3000, 0x100, 0, &fs), Ok(()), "read-only, read pin");
        assert_eq!(check_range(&vmas, 0x3000, 0x100, 1, &fs), Err(libc::EFAULT));
    }
}
