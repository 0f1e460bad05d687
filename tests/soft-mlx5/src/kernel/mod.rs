//! The kernel side of the emulated device: what mlx5_ib answers to libibverbs and libmlx5.
//!
//! The interposer hands every operation on the emulated `/dev/infiniband/uverbs0` to this
//! module: the uverbs write() commands ([`write`]), RDMA_VERBS_IOCTL ([`ioctl`]), mmap of UAR
//! pages. Decoding of the ABI lives here; the objects and the data path live in
//! [`crate::device`] and [`crate::engine`].

pub mod devx;
pub mod ioctl;
pub mod modify;
pub mod pin;
pub mod prm;
pub mod write;

use crate::device;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What the kernel keeps per open of the command device (a ucontext after GET_CONTEXT).
#[derive(Debug, Default)]
pub struct Ucontext {
    /// GET_CONTEXT done.
    pub ready: bool,
    /// The bfregs GET_CONTEXT gave (`tot_bfregs`) and the CQE version: what QUERY_CONTEXT
    /// answers again.
    pub tot_bfregs: u32,
    /// See `tot_bfregs`.
    pub cqe_version: u8,
    /// The async event file (the fd handed to the library).
    pub async_fd: Option<i32>,
    /// Completion channels created on this context (their fds).
    pub channels: Vec<i32>,
    /// The DEVX uid the context was given at GET_CONTEXT (0: none).
    pub devx_uid: u16,
    /// QPs using each blue-flame register (mlx5_bfreg_info.count), by bfreg number.
    pub bfreg_count: Vec<u32>,
    /// mlx5_bfreg_info.num_low_latency_bfregs.
    pub low_latency_bfregs: u32,
    /// The UAR pages the library mapped, by mlx5_ib's system page index (`bfregi->sys_pages`:
    /// the static pages by their mmap index, the dynamic ones after them), at the device's own
    /// mapping of the same page of the device file.
    pub uar_pages: BTreeMap<u32, u64>,
    /// mlx5_ib's `num_static_sys_pages`: the UAR pages of the bfregs asked for at GET_CONTEXT
    /// (`total_num_bfregs` over MLX5_NON_FP_BFREGS_PER_UAR, 2 per 4K system page).
    pub num_static_sys_pages: u32,
    /// The device's own mappings of the device file, by mmap offset.
    pub mapped: BTreeMap<i64, u64>,
    /// The inode of the file behind the device fd (to find the library's mappings of it).
    pub file_ino: u64,
    /// The firmware UAR index of each mapped system page (what a QP context's `uar_page` and
    /// DEVX_QUERY_UAR name).
    pub uar_ids: BTreeMap<u32, u32>,
    /// Per firmware UAR index, the dynamic bfregs the library asked DEVX_QUERY_UAR about: the
    /// registers behind the DEVX UARs it handed out (libmlx5 `mlx5dv_devx_alloc_uar` queries
    /// the one it attached).
    pub devx_uar_bfregs: BTreeMap<u32, std::collections::BTreeSet<u32>>,
}

/// Firmware UAR indexes, handed out as pages are mapped (mlx5_cmd_uar_alloc); index 0 and the
/// first few belong to the kernel driver.
static NEXT_UAR_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0x10);

/// The firmware UAR index of the library's dynamic bfreg `user_idx` on context `fd`
/// (`bfregn_to_uar_index(.., dyn_bfreg true)`), None where mlx5_ib answers EINVAL.
pub fn dyn_uar_index(fd: i32, user_idx: u32) -> Option<u32> {
    let ctxs = contexts();
    let ctx = ctxs.get(&fd)?;
    if user_idx > NUM_DYN_BFREGS {
        return None;
    }
    let page = user_idx / 2 + ctx.num_static_sys_pages;
    if page >= ctx.num_static_sys_pages + DYN_SYS_PAGES {
        return None;
    }
    ctx.uar_ids.get(&page).copied()
}

/// DEVX_QUERY_UAR answered `id` for the library's dynamic bfreg `user_idx` on context `fd`.
pub fn note_devx_uar(fd: i32, id: u32, user_idx: u32) {
    if let Some(ctx) = contexts().get_mut(&fd) {
        ctx.devx_uar_bfregs.entry(id).or_default().insert(user_idx);
    }
}

/// The BlueFlame register a QP created through DEVX on UAR `id` is rung through, for the
/// BlueFlame oracle. The QP context names the UAR page only, not which of its two registers
/// the library writes: where DEVX_QUERY_UAR was asked about exactly one register of the page
/// (the one behind the DEVX UAR the library holds), that one; otherwise (ambiguous, or a UAR
/// never queried) None, and the QP's copies go unjudged.
pub fn devx_qp_bf_register(fd: i32, id: u32) -> Option<crate::device::objects::BfReg> {
    let ctxs = contexts();
    let ctx = ctxs.get(&fd)?;
    let regs = ctx.devx_uar_bfregs.get(&id)?;
    if regs.len() != 1 {
        return None;
    }
    ctx.bf_register(*regs.first()?, true)
}

/// Whether firmware UAR index `id` is one of context `fd`'s (the firmware refuses a QP on a
/// UAR of another user).
pub fn owns_uar(fd: i32, id: u32) -> bool {
    contexts()
        .get(&fd)
        .is_some_and(|c| c.uar_ids.values().any(|&u| u == id))
}

/// Dynamic UAR system pages per context: mlx5_ib `calc_dynamic_bfregs` (1024 dynamic bfregs
/// with 4 KiB pages) over MLX5_NON_FP_BFREGS_PER_UAR (2).
pub const DYN_SYS_PAGES: u32 = NUM_DYN_BFREGS / 2;

/// The dynamic bfregs a context gets (the alloc_ucontext response's `num_dyn_bfregs`).
pub const NUM_DYN_BFREGS: u32 = 1024;

/// Bytes per BlueFlame register (the alloc_ucontext response's `bf_reg_size`).
pub const BF_REG_SIZE: u32 = 512;

/// Where libmlx5 writes the doorbells of a QP given bfreg index `bfi` (the create-QP response's
/// `bfreg_index`, or the one the library passed with MLX5_QP_FLAG_BFREG_INDEX when `dynamic`)
/// on context `fd`; see [`Ucontext::bf_register`].
pub fn bf_register(fd: i32, bfi: u32, dynamic: bool) -> Option<crate::device::objects::BfReg> {
    contexts().get(&fd)?.bf_register(bfi, dynamic)
}

impl Ucontext {
    /// The BlueFlame register of bfreg `bfi` at the device's mapping of its UAR page.
    ///
    /// Kernel-assigned (`dynamic` false): providers/mlx5/mlx5.c `mlx5_init_context` places
    /// register `bfi` in UAR page `bfi / NUM_BFREGS_PER_UAR` (4; one 4K UAR per page), at
    /// MLX5_BF_OFFSET (0x800) plus `bfi % 4` registers of `bf_reg_size`; register 0 has no
    /// BlueFlame buffer (8-byte doorbells only), so nothing is watched there.
    ///
    /// Chosen by the library (`dynamic`, a thread domain's register from a legacy dynamic UAR):
    /// mlx5_ib qp.c `bfregn_to_uar_index(.., dyn_bfreg true)` takes system page
    /// `bfi / MLX5_NON_FP_BFREGS_PER_UAR (2) + num_static_sys_pages`, which must be within the
    /// dynamic pages and mapped (the ALLOC_WC mmap of library page `bfi / 2` set it), and
    /// `bfi <= num_dyn_bfregs`; otherwise create-QP fails with EINVAL (None here). libmlx5
    /// verbs.c `mlx5_insert_dyn_uuars` writes register `bfi % 2` of that page, at MLX5_BF_OFFSET
    /// plus `bfi % 2` registers of `bf_reg_size`; halves are `bf_reg_size / 2` in both cases.
    pub fn bf_register(&self, bfi: u32, dynamic: bool) -> Option<crate::device::objects::BfReg> {
        let (page, slot) = if dynamic {
            if bfi > NUM_DYN_BFREGS {
                return None;
            }
            let page = bfi / 2 + self.num_static_sys_pages;
            if page >= self.num_static_sys_pages + DYN_SYS_PAGES {
                return None;
            }
            (page, bfi % 2)
        } else {
            if bfi == 0 {
                return None;
            }
            (bfi / 4, bfi % 4)
        };
        let page = *self.uar_pages.get(&page)?;
        Some(crate::device::objects::BfReg {
            addr: page + 0x800 + u64::from(slot * BF_REG_SIZE),
            half: BF_REG_SIZE / 2,
        })
    }
}

/// mlx5_ib's blue-flame register allocation (drivers/infiniband/hw/mlx5/qp.c: alloc_bfreg,
/// alloc_high_class_bfreg, alloc_med_class_bfreg, adjust_bfregn; 4K UARs, uapi v2): a QP gets
/// an unused low-latency register (the highest class), else the least used medium one, else
/// register 0 (8-byte doorbells only). Returns the bfreg number; the response carries
/// [`adjust_bfregn`] of it.
pub fn alloc_bfreg(fd: i32) -> u32 {
    let mut ctxs = contexts();
    let Some(ctx) = ctxs.get_mut(&fd) else {
        return 0;
    };
    let max = ctx.bfreg_count.len() as i64;
    // num_med_bfreg: all but the low-latency ones and the non-blue-flame register 0.
    let med = (max - i64::from(ctx.low_latency_bfregs) - 1).max(0);
    let first_hi = med + 1;
    let count = &mut ctx.bfreg_count;
    if let Some(i) = (first_hi..max).find(|&i| count[i as usize] == 0) {
        count[i as usize] += 1;
        return i as u32;
    }
    if med > 0 {
        let mut minidx = 1;
        for i in 1..first_hi as usize {
            if count[i] < count[minidx] {
                minidx = i;
            }
            if count[minidx] == 0 {
                break;
            }
        }
        count[minidx] += 1;
        return minidx as u32;
    }
    if let Some(c) = count.first_mut() {
        *c += 1;
    }
    0
}

/// mlx5_ib's free_bfreg: the QP using register `bfregn` of context `fd` is gone.
pub fn free_bfreg(fd: i32, bfregn: u32) {
    if let Some(c) = contexts()
        .get_mut(&fd)
        .and_then(|ctx| ctx.bfreg_count.get_mut(bfregn as usize))
    {
        *c = c.saturating_sub(1);
    }
}

/// mlx5_ib's adjust_bfregn: a bfreg number as the library indexes its registers (4 per UAR
/// page, of which the first 2 are not fast-path).
pub fn adjust_bfregn(bfregn: u32) -> u32 {
    bfregn / 2 * 4 + bfregn % 2
}

/// The DEVX methods libmlx5 calls, as devx.c tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevxMethod {
    /// MLX5_IB_METHOD_DEVX_OTHER (the whitelisted general commands: HCA caps and the like).
    Other,
    /// MLX5_IB_METHOD_DEVX_OBJ_CREATE / _MODIFY / _DESTROY.
    Object,
}

/// mlx5_ib_alloc_ucontext: a context asking for DEVX (MLX5_IB_ALLOC_UCTX_DEVX) gets a uid from
/// mlx5_ib_devx_create, which fails with EINVAL where the function has no user contexts
/// (log_max_uctx 0); libmlx5 then opens again without asking. `next` numbers the uids.
pub fn devx_uid(profile: &crate::profile::Profile, flags: u32, next: &mut u16) -> Result<u16, i32> {
    if flags & crate::uapi::mlx5_abi::MLX5_IB_ALLOC_UCTX_DEVX == 0 {
        return Ok(0);
    }
    if !profile.devx {
        return Err(libc::EINVAL);
    }
    *next = next.wrapping_add(1).max(1);
    Ok(*next)
}

/// Whether a context with DEVX uid `uid` may call `method` (devx.c): without DEVX on the
/// device the methods are not in the uverbs tree (EPROTONOSUPPORT); the whitelisted general
/// commands run under the device's whitelist uid, while objects need the context's own uid
/// (devx_get_uid: EINVAL).
pub fn devx_allowed(profile: &crate::profile::Profile, uid: u16, method: DevxMethod) -> Result<(), i32> {
    if !profile.devx {
        return Err(libc::EPROTONOSUPPORT);
    }
    if method == DevxMethod::Object && uid == 0 {
        return Err(libc::EINVAL);
    }
    Ok(())
}

/// The DEVX uid of the context opened as `fd` (0: none, or no such context).
pub fn devx_uid_of(fd: i32) -> u16 {
    contexts().get(&fd).map_or(0, |c| c.devx_uid)
}

/// Open command-device fds and their contexts.
static CONTEXTS: Mutex<BTreeMap<i32, Ucontext>> = Mutex::new(BTreeMap::new());

fn contexts() -> std::sync::MutexGuard<'static, BTreeMap<i32, Ucontext>> {
    CONTEXTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `fd` as an open of the command device.
pub fn open(fd: i32) {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstat of the fd just opened into a local buffer, by system call (the
    // interposer's fstat answers for the character device instead).
    let r = unsafe { libc::syscall(libc::SYS_fstat, fd, st.as_mut_ptr()) };
    // SAFETY: zero-initialised, and filled in by a successful fstat.
    let file_ino = if r == 0 { unsafe { st.assume_init() }.st_ino } else { 0 };
    contexts().insert(
        fd,
        Ucontext {
            file_ino,
            ..Ucontext::default()
        },
    );
    crate::log(format_args!("uverbs0 opened as fd {fd}"));
}

/// Whether `fd` is an open of the command device.
pub fn is_device_fd(fd: i32) -> bool {
    contexts().contains_key(&fd)
}

/// A dup of a device fd shares its context, as a dup of the real file would.
pub fn dup(old: i32, new: i32) {
    let mut c = contexts();
    // The copy is the same file, so the same ucontext (ibv_import_device works on it): its
    // bfreg layout, DEVX uid and CQE version. What the emulator keeps per fd (its own
    // mappings of pages mapped through this fd, the async file made at GET_CONTEXT) stays
    // with the fd it belongs to, so closing either fd leaves the other's intact.
    if let Some(o) = c.get(&old) {
        let copy = Ucontext {
            ready: o.ready,
            tot_bfregs: o.tot_bfregs,
            cqe_version: o.cqe_version,
            devx_uid: o.devx_uid,
            bfreg_count: o.bfreg_count.clone(),
            low_latency_bfregs: o.low_latency_bfregs,
            num_static_sys_pages: o.num_static_sys_pages,
            file_ino: o.file_ino,
            ..Default::default()
        };
        c.insert(new, copy);
    }
}

/// The device fd is closed: a last close tears the context down (its pipes are closed).
pub fn close(fd: i32) {
    let mut dev = device::global();
    let Some(ctx) = contexts().remove(&fd) else {
        return;
    };
    // The context's UAR pages go with it (mlx5_ib frees them at dealloc_ucontext).
    dev.uars.retain(|u| !ctx.mapped.values().any(|m| m == u));
    for &addr in ctx.mapped.values() {
        // SAFETY: the device's own mapping of one page, made in map_page; nothing else
        // refers to it now that it left the watch list under the device lock.
        unsafe { libc::syscall(libc::SYS_munmap, addr as usize, 4096usize) };
    }
    if let Some(a) = ctx.async_fd {
        dev.async_fds.retain(|&f| f != a);
        dev.events.close(a);
    }
    // Channels outlive their context's fd only as long as the library keeps their fds open;
    // their token ends go when the library closes them (event_close).
    let _ = ctx.channels;
}

/// The pages of the command device file (offsets up to this) can be mapped: the largest
/// offset mlx5_ib's mmap decodes is an MLX5_IB_MMAP_ALLOC_WC page with a 16-bit extended index
/// (`get_extended_index`), below 1 << 24 pages. The backing memfd is sparse: only pages the
/// library maps and writes take memory.
pub const DEVICE_FILE_LEN: i64 = 1 << 36;

/// The mmap command and the page index in an mmap offset of the command device, as mlx5_ib
/// decodes them (drivers/infiniband/hw/mlx5/main.c `get_command`, `get_index`,
/// `get_extended_index`): the command is bits 8..16 of the page offset; MLX5_IB_MMAP_ALLOC_WC
/// takes its index from bits 0..8 and 16..24, the others from bits 0..8 (and, for the regular
/// pages, bits 16..24 too: `get_index`).
pub fn decode_mmap_offset(offset: i64) -> (u32, u32) {
    let pgoff = (offset >> 12) as u64;
    let cmd = ((pgoff >> 8) & 0xff) as u32;
    let index = ((pgoff & 0xff) | (((pgoff >> 16) & 0xff) << 8)) as u32;
    (cmd, index)
}

/// MLX5_IB_MMAP_REGULAR_PAGE, _WC_PAGE, _NC_PAGE: the context's static UAR pages.
const STATIC_UAR_CMDS: [u32; 3] = [0, 2, 3];
/// MLX5_IB_MMAP_ALLOC_WC: a dynamic UAR page the library picked (legacy dynamic UARs).
const MMAP_ALLOC_WC: u32 = 6;
/// MLX5_IB_MMAP_CLOCK_INFO, with index MLX5_IB_CLOCK_INFO_V1 (0): the clock info page.
const MMAP_CLOCK_INFO: u32 = 7;

/// Whether mlx5_ib's mmap serves `offset` of the command device (uar_mmap's commands;
/// anything else: EINVAL; EIO once the device is disassociated). What the library maps
/// through a path that bypasses the interposer (a plain libc mmap of the device fd) is learnt
/// from the process's mappings instead ([`learn_mappings`]).
pub fn mmap_check(offset: i64) -> Result<(), i32> {
    // Disassociated (device_fatal): ib_uverbs_mmap finds no ucontext (EIO).
    if device::global().fatal {
        return Err(libc::EIO);
    }
    let (cmd, index) = decode_mmap_offset(offset);
    if STATIC_UAR_CMDS.contains(&cmd) || cmd == MMAP_ALLOC_WC || (cmd == MMAP_CLOCK_INFO && index == 0) {
        Ok(())
    } else {
        Err(libc::EINVAL)
    }
}

/// The clock info page (mlx5_ib `mlx5_ib_mmap_clock_info_page`, the page mlx5_core's clock
/// keeps in `mdev->clock_info`): written into the device file at its mmap offset, so the
/// library's read-only mapping of it shows what mlx5dv_get_clock_info reads. The device's
/// free-running counter runs at `hca_core_clock` (156,250 kHz: 6.4 ns a cycle, mult/shift as
/// mlx5_core's `clocksource_khz2mult`-style conversion with shift 23); the page pins cycle 0 to
/// the wall-clock time the page was written (sign 0: no update in progress).
fn write_clock_info(fd: i32, offset: i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let shift = 23u32;
    let info = crate::uapi::mlx5_abi::mlx5_ib_clock_info {
        sign: 0,
        resv: 0,
        nsec: now,
        cycles: 0,
        frac: 0,
        mult: ((1_000_000u64 << shift) / 156_250) as u32,
        shift,
        mask: (1 << 63) - 1,
        overflow_period: 0,
    };
    let mut page = vec![0u8; std::mem::size_of_val(&info)];
    crate::uapi::write_struct(&mut page, &info);
    // SAFETY: pwrite of our own buffer to the device file the library mapped (a memfd).
    unsafe { libc::syscall(libc::SYS_pwrite64, fd, page.as_ptr(), page.len(), offset) };
}

/// The library mapped `len` bytes at `offset` of the command device `fd` (through the
/// interposer): the device maps the same pages of the device file for itself.
pub fn mmap(fd: i32, len: usize, offset: i64) {
    if decode_mmap_offset(offset).0 == MMAP_CLOCK_INFO {
        write_clock_info(fd, offset);
        return;
    }
    let mut dev = device::global();
    for page in 0..len.div_ceil(4096) as i64 {
        map_page(&mut dev, fd, offset + page * 4096);
    }
    drop(dev);
    crate::engine::start();
}

/// The device's own mapping of the page at `offset` of `fd`'s device file, made once; the UAR
/// pages it holds join the watch list. Like mlx5_ib's uar_mmap, an ALLOC_WC page outside the
/// context's dynamic pages is refused (nothing is mapped here). Takes the contexts lock under
/// the device lock, the order the command paths take them.
fn map_page(dev: &mut device::Device, fd: i32, offset: i64) -> Option<u64> {
    let (cmd, index) = decode_mmap_offset(offset);
    let mut ctxs = contexts();
    let ctx = ctxs.get_mut(&fd)?;
    // mlx5_ib uar_mmap: static pages are 0..num_static_sys_pages, dynamic ones follow
    // (`idx = get_extended_index(vm_pgoff) + bfregi->num_static_sys_pages`, EINVAL past
    // num_sys_pages).
    let sys_page = if STATIC_UAR_CMDS.contains(&cmd) {
        index
    } else if cmd == MMAP_ALLOC_WC {
        let i = index + ctx.num_static_sys_pages;
        (i < ctx.num_static_sys_pages + DYN_SYS_PAGES).then_some(i)?
    } else {
        return None;
    };
    if let Some(&addr) = ctx.mapped.get(&offset) {
        return Some(addr);
    }
    // SAFETY: maps one page of the device file at a fresh address; no memory of the
    // application's is touched. A system call, so nothing interposed (the library's memory
    // hooks included) sees it.
    let p = unsafe {
        libc::syscall(
            libc::SYS_mmap,
            0usize,
            4096usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            offset,
        )
    };
    if p < 0 {
        return None;
    }
    let addr = p as u64;
    ctx.mapped.insert(offset, addr);
    ctx.uar_pages.entry(sys_page).or_insert(addr);
    ctx.uar_ids
        .entry(sys_page)
        .or_insert_with(|| NEXT_UAR_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    drop(ctxs);
    dev.uars.push(addr);
    Some(addr)
}

/// [`learn_mappings`] where the system page `sys_page` of context `fd` is not known yet (what
/// it costs, reading /proc/self/maps, is paid only when something is missing).
pub fn learn_page(dev: &mut device::Device, fd: i32, sys_page: u32) {
    if contexts()
        .get(&fd)
        .is_some_and(|c| !c.uar_pages.contains_key(&sys_page))
    {
        learn_mappings(dev, fd);
    }
}

/// [`learn_mappings`] where firmware UAR index `id` is not one of context `fd`'s yet.
pub fn learn_uar(dev: &mut device::Device, fd: i32, id: u32) {
    if !owns_uar(fd, id) {
        learn_mappings(dev, fd);
    }
}

/// The system page of the library's dynamic bfreg `bfi` on context `fd` (mlx5_ib
/// `bfregn_to_uar_index`).
pub fn dyn_sys_page(fd: i32, bfi: u32) -> Option<u32> {
    Some(bfi / 2 + contexts().get(&fd)?.num_static_sys_pages)
}

/// The command device pages of `fd` the process has mapped without the interposer seeing it
/// (a library's memory hooks may call libc's mmap directly): mlx5_ib's mmap handler runs for
/// every mapping whatever the caller, so the kernel side knows them; here they are read from
/// /proc/self/maps (the device file by its inode) and mapped by the device as in [`mmap`].
pub fn learn_mappings(dev: &mut device::Device, fd: i32) {
    let Some(ino) = contexts().get(&fd).map(|c| c.file_ino) else {
        return;
    };
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    for line in maps.lines() {
        // start-end perms offset dev inode path
        let mut f = line.split_ascii_whitespace();
        let (Some(range), Some(_), Some(off), Some(_), Some(inode)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if inode.parse::<u64>().ok() != Some(ino) || ino == 0 {
            continue;
        }
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi), Ok(off)) = (
            u64::from_str_radix(lo, 16),
            u64::from_str_radix(hi, 16),
            i64::from_str_radix(off, 16),
        ) else {
            continue;
        };
        for page in 0..(hi.saturating_sub(lo) / 4096) as i64 {
            map_page(dev, fd, off + page * 4096);
        }
    }
}

/// munmap of anything: the device keeps its own mappings of the UAR pages (a page the library
/// unmaps stays the context's until the context goes, as in mlx5_ib), so nothing changes here.
pub fn munmap(_addr: u64, _len: usize) {}

thread_local! {
    /// The locks the forking thread holds across fork() (see [`install_fork_handlers`]).
    static HELD_ACROSS_FORK: std::cell::RefCell<Vec<Box<dyn std::any::Any>>> = const { std::cell::RefCell::new(Vec::new()) };
}

extern "C" fn fork_prepare() {
    // The device lock, then the contexts lock: the order the command paths take them.
    let dev: Box<dyn std::any::Any> = Box::new(device::global());
    let ctxs: Box<dyn std::any::Any> = Box::new(contexts());
    HELD_ACROSS_FORK.with(|h| h.borrow_mut().extend([dev, ctxs]));
}

extern "C" fn fork_parent() {
    HELD_ACROSS_FORK.with(|h| h.borrow_mut().clear());
}

extern "C" fn fork_child() {
    HELD_ACROSS_FORK.with(|h| h.borrow_mut().clear());
    // The device thread did not survive the fork: the child starts its own on first use. The
    // fabric socket is the parent's: answers to the parent's requests arrive there, so the
    // child's device leaves the fabric (it reaches only itself).
    crate::engine::forget_thread();
    device::global().detach();
}

/// Registers fork handlers so that fork() never copies the device or context lock held by
/// another thread into the child (which would then deadlock on its first verb), and so that
/// a child using the device gets a device thread of its own. Called once by the interposer.
pub fn install_fork_handlers() {
    // SAFETY: registers three extern "C" functions that only take and release this crate's
    // locks; pthread_atfork has no other preconditions.
    unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child)) };
}

/// The device fails for good (a firmware fatal error, a PCI error, a hot unplug) and the kernel
/// unregisters it, disassociating every open context; no recovery follows (a recovered device
/// is a new one, which this process never sees). What the library meets, as mlx5_ib and
/// ib_uverbs make it:
/// - every async event file gets IB_EVENT_DEVICE_FATAL for port 1 (mlx5_ib main.c
///   `mlx5_ib_handle_sys_error_event`; mlx5_core passes port 1 with MLX5_DEV_EVENT_SYS_ERROR);
/// - the unregistration (health recovery's unload, the PCI error handler, the removal) runs
///   `ib_uverbs_remove_one`, whose `ib_uverbs_free_hw_resources` destroys every object of every
///   context (`uverbs_destroy_ufile_hw`, RDMA_REMOVE_DRIVER_REMOVE): the objects' queued events
///   are freed unreported (`ib_uverbs_release_ucq`, `ib_uverbs_release_uevent`), each
///   completion channel's queue is closed (`uverbs_completion_event_file_destroy_uobj`:
///   reads fail with EIO, poll says EPOLLERR), and each async event file gets a last
///   IB_EVENT_DEVICE_FATAL with element 0 and stays readable
///   (uverbs_std_types_async_fd.c `uverbs_async_event_destroy_uobj`);
/// - from then on commands fail with EIO but for the destroys, which succeed (rdma_core.c
///   `rdma_lookup_get_uobject` lets UVERBS_LOOKUP_DESTROY through; see [`write::handle`] and
///   [`ioctl::handle`]), mmap fails with EIO (`ib_uverbs_mmap`), and the device executes
///   nothing: no CQE is written for the work in flight, so `ibv_poll_cq` (libmlx5 reads the CQ
///   buffer, no system call) finds nothing new for ever.
pub fn device_fatal(dev: &mut device::Device) {
    use device::events::Owner;
    use device::{event, AsyncEvent};
    if dev.fatal {
        return;
    }
    dev.fatal = true;
    crate::log(format_args!("device fatal: every context disassociated"));
    let fatal = |element| AsyncEvent {
        element,
        event_type: event::DEVICE_FATAL,
    };
    dev.raise(fatal(1), Owner::Device);
    let channels: Vec<i32> = contexts().values().flat_map(|c| c.channels.clone()).collect();
    for ch in channels {
        dev.events.close_queue(ch);
    }
    for a in dev.async_fds.clone() {
        dev.events.drop_object_events(a);
    }
    dev.raise(fatal(0), Owner::Device);
}

/// Whether `fd` is an event file (async events or a completion channel); lock-free.
pub fn is_event_fd(fd: i32) -> bool {
    device::events::EVENT_FDS.contains(fd)
}

/// read() of an event file (`ib_uverbs_event_read`): the event at the head of the queue, one
/// per read; a buffer smaller than an event is EINVAL; with nothing queued EAGAIN on a
/// non-blocking fd, else it waits for an event (EINTR when a signal comes first); EIO once the
/// kernel closed the queue ([`device::events::EventFiles::close_queue`]) and it is empty.
pub fn event_read(fd: i32, buf: &mut [u8]) -> Result<usize, i32> {
    loop {
        {
            let mut dev = device::global();
            let size = dev.events.event_size(fd).ok_or(libc::EBADF)?;
            if buf.len() < size {
                return Err(libc::EINVAL);
            }
            if let Some(ev) = dev.events.read(fd)? {
                buf[..ev.len()].copy_from_slice(&ev);
                return Ok(ev.len());
            }
        }
        // SAFETY: F_GETFL of the application's own event fd.
        let flags = unsafe { libc::syscall(libc::SYS_fcntl, fd, libc::F_GETFL) };
        if flags < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EBADF));
        }
        if flags as i32 & libc::O_NONBLOCK != 0 {
            return Err(libc::EAGAIN);
        }
        // Outside the device lock, so a waiting reader does not stall the device: until a
        // token comes or the queue is closed (POLLERR, always reported).
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd; no timeout.
        if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINTR));
        }
    }
}

/// The library closed an event file.
pub fn event_close(fd: i32) {
    let mut dev = device::global();
    dev.events.close(fd);
    devx::channel_closed(&mut dev, fd);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;
    use crate::uapi::mlx5_abi::MLX5_IB_ALLOC_UCTX_DEVX;

    #[test]
    fn qps_get_the_low_latency_bfregs_first_then_the_least_used_medium_ones_as_mlx5_ib_gives_them() {
        // libmlx5 asks for 16 bfregs, 4 of them low-latency: 0 is the doorbell-only one,
        // 1..=11 medium (shared), 12..=15 low-latency.
        let fd = -4242;
        contexts().insert(
            fd,
            Ucontext {
                bfreg_count: vec![0; 16],
                low_latency_bfregs: 4,
                ..Ucontext::default()
            },
        );
        let first: Vec<u32> = (0..6).map(|_| alloc_bfreg(fd)).collect();
        assert_eq!(first, [12, 13, 14, 15, 1, 2]);
        assert_eq!(
            adjust_bfregn(12),
            24,
            "libmlx5's index: 4 registers per UAR, 2 not fast-path"
        );
        free_bfreg(fd, 13);
        assert_eq!(alloc_bfreg(fd), 13, "a freed low-latency register is given again");
        contexts().remove(&fd);
    }

    #[test]
    fn uar_mmap_offsets_decode_as_mlx5_ib_reads_them_and_unknown_commands_are_refused() {
        // Regular page 3; ALLOC_WC (6) dynamic page 0x105 (extended index: bits 16..24).
        assert_eq!(decode_mmap_offset(3 << 12), (0, 3));
        assert_eq!(decode_mmap_offset(((1 << 16) | (6 << 8) | 5) << 12), (6, 0x105));
        assert_eq!(mmap_check(((6 << 8) | 5) << 12), Ok(()));
        // MLX5_IB_MMAP_CORE_CLOCK (5) and the rest are not UAR pages here; the clock info
        // page (7, version 1 at index 0) is mapped.
        assert_eq!(mmap_check((5 << 8) << 12), Err(libc::EINVAL));
        assert_eq!(mmap_check((7 << 8) << 12), Ok(()));
        assert_eq!(mmap_check(((7 << 8) | 1) << 12), Err(libc::EINVAL));
    }

    #[test]
    fn a_dynamic_bfreg_names_its_uar_index_once_its_page_was_mapped_and_devx_qps_get_the_register_queried() {
        let fd = -4343;
        let mut ctx = Ucontext {
            num_static_sys_pages: 8,
            ..Ucontext::default()
        };
        ctx.uar_ids.insert(9, 0x77);
        contexts().insert(fd, ctx);
        // bfregs 2 and 3 sit in the library's ALLOC_WC page 1, system page 8 + 1.
        assert_eq!(dyn_uar_index(fd, 2), Some(0x77));
        assert_eq!(dyn_uar_index(fd, 3), Some(0x77));
        assert_eq!(dyn_uar_index(fd, 4), None, "page 2 never mapped: EINVAL");
        assert_eq!(dyn_uar_index(fd, NUM_DYN_BFREGS + 1), None);
        assert!(owns_uar(fd, 0x77) && !owns_uar(fd, 0x78));
        // A QP created through DEVX on UAR 0x77: the register QUERY_UAR named, while only one
        // of the page's two was asked about.
        contexts().get_mut(&fd).unwrap().uar_pages.insert(9, 0x10_0000);
        assert_eq!(devx_qp_bf_register(fd, 0x77), None, "never queried");
        note_devx_uar(fd, 0x77, 3);
        assert_eq!(
            devx_qp_bf_register(fd, 0x77).map(|r| r.addr),
            Some(0x10_0000 + 0x800 + 512)
        );
        note_devx_uar(fd, 0x77, 2);
        assert_eq!(devx_qp_bf_register(fd, 0x77), None, "either register: not judged");
        contexts().remove(&fd);
    }

    /// What the library meets when the device goes fatal (see [`device_fatal`]): on the async
    /// event file, the QP's pending event gone and two DEVICE_FATAL (port 1 from mlx5_ib, 0
    /// from the disassociation); on the completion channel, its pending event gone, EIO,
    /// POLLERR; the device marked fatal.
    #[test]
    fn a_fatal_device_raises_device_fatal_twice_and_closes_every_completion_channel() {
        use crate::device::events::Owner;
        use crate::device::{event, AsyncEvent, Device};
        let mut dev = Device::new(Profile::by_name("cx5-ib").unwrap(), 0, Box::new(crate::mem::LocalDma));
        let async_fd = dev.events.create(16).unwrap();
        dev.async_fds.push(async_fd);
        let channel = dev.events.create(8).unwrap();
        let fd = -4444;
        contexts().insert(
            fd,
            Ucontext {
                async_fd: Some(async_fd),
                channels: vec![channel],
                ..Ucontext::default()
            },
        );
        let qp_fatal = AsyncEvent {
            element: 0x77,
            event_type: event::QP_FATAL,
        };
        dev.raise(qp_fatal, Owner::Qp(9));
        dev.events.push(channel, vec![1; 8], Owner::Cq(2));
        device_fatal(&mut dev);
        device_fatal(&mut dev);
        assert!(dev.fatal);
        let desc = |element: u64| {
            let mut d = vec![0u8; 16];
            d[..8].copy_from_slice(&element.to_ne_bytes());
            d[8..12].copy_from_slice(&event::DEVICE_FATAL.to_ne_bytes());
            d
        };
        assert_eq!(dev.events.read(async_fd), Ok(Some(desc(1))));
        assert_eq!(dev.events.read(async_fd), Ok(Some(desc(0))));
        assert_eq!(dev.events.read(async_fd), Ok(None), "the async file stays open, empty");
        assert_eq!(dev.events.read(channel), Err(libc::EIO));
        let mut p = libc::pollfd {
            fd: channel,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        assert_eq!(unsafe { libc::poll(&mut p, 1, 0) }, 1);
        assert_eq!(p.revents, libc::POLLERR);
        assert_eq!(dev.events.release(Owner::Cq(2)), 0);
        assert_eq!(dev.events.release(Owner::Qp(9)), 0);
        contexts().remove(&fd);
        for f in [async_fd, channel] {
            dev.events.close(f);
            // SAFETY: the application's ends, created above.
            unsafe { libc::close(f) };
        }
    }

    /// A thread blocked in read(2) of a completion channel (libibverbs' ibv_get_cq_event on a
    /// blocking channel) is woken by the disassociation and fails with EIO, as
    /// ib_uverbs_event_read's wait ends on `is_closed`.
    #[test]
    fn a_reader_blocked_on_a_channel_wakes_with_eio_when_its_queue_closes() {
        let channel = device::global().events.create(8).unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8];
            event_read(channel, &mut buf)
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!reader.is_finished(), "nothing queued: the reader waits");
        device::global()
            .events
            .push(channel, vec![3; 8], device::events::Owner::Cq(1));
        assert_eq!(reader.join().unwrap(), Ok(8));
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8];
            event_read(channel, &mut buf)
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        device::global().events.close_queue(channel);
        assert_eq!(reader.join().unwrap(), Err(libc::EIO));
        let mut small = [0u8; 4];
        assert_eq!(event_read(channel, &mut small), Err(libc::EINVAL));
        device::global().events.close(channel);
        // SAFETY: the application's end, created above.
        unsafe { libc::close(channel) };
    }

    #[test]
    fn without_devx_a_devx_context_is_refused_and_devx_methods_are_absent() {
        let p = Profile::by_name("cx5-no-devx").unwrap();
        let mut next = 0;
        assert_eq!(devx_uid(p, MLX5_IB_ALLOC_UCTX_DEVX, &mut next), Err(libc::EINVAL));
        assert_eq!(devx_uid(p, 0, &mut next), Ok(0), "libmlx5's second open, without DEVX");
        for m in [DevxMethod::Other, DevxMethod::Object] {
            assert_eq!(devx_allowed(p, 0, m), Err(libc::EPROTONOSUPPORT));
        }
    }

    #[test]
    fn devx_objects_need_the_contexts_own_uid_general_commands_do_not() {
        let p = Profile::by_name("cx5-ib").unwrap();
        let mut next = 0;
        let uid = devx_uid(p, MLX5_IB_ALLOC_UCTX_DEVX, &mut next).unwrap();
        assert_ne!(uid, 0);
        assert_eq!(devx_allowed(p, uid, DevxMethod::Object), Ok(()));
        assert_eq!(devx_allowed(p, 0, DevxMethod::Object), Err(libc::EINVAL));
        assert_eq!(devx_allowed(p, 0, DevxMethod::Other), Ok(()));
    }
}
