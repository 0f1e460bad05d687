//! Support for the workspace tests and benches: the layout tables (C probe and Rust), the
//! C recording function table of the ABI test and the C reference post path.
#![deny(unsafe_op_in_unsafe_fn)]

pub use mlx5dv_raw as raw;

/// Layout tables and their comparison.
pub mod layout {
    use super::raw;
    use std::collections::BTreeMap;
    use std::ffi::CStr;
    use std::os::raw::{c_char, c_int, c_ulong};

    /// What an entry describes.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// A struct or union: `a` = size, `b` = alignment.
        Type,
        /// A field: `a` = offset, `b` = size, `c` = alignment.
        Field,
        /// A constant: `a` = value.
        Const,
        /// An enum type: `a` = size, `b` = 1 if signed.
        Enum,
    }

    /// One measured item.
    #[derive(Clone, Debug)]
    pub struct Entry {
        /// Type or constant name.
        pub ty: &'static str,
        /// Field name for fields.
        pub field: Option<&'static str>,
        /// See [`Kind`].
        pub a: i64,
        /// See [`Kind`].
        pub b: i64,
        /// See [`Kind`].
        pub c: i64,
        /// What it is.
        pub kind: Kind,
    }

    /// Size and alignment of a field's type, without reading anything.
    #[macro_export]
    macro_rules! field_size_align {
        ($t:ty, $f:ident) => {{
            let uninit = core::mem::MaybeUninit::<$t>::uninit();
            let base = uninit.as_ptr();
            // SAFETY: only the address of the field is taken; nothing is read.
            let field = unsafe { core::ptr::addr_of!((*base).$f) };
            ($crate::layout::size_of_pointee(field), $crate::layout::align_of_pointee(field))
        }};
    }

    /// `size_of` the pointee.
    pub fn size_of_pointee<T>(_: *const T) -> usize {
        core::mem::size_of::<T>()
    }

    /// `align_of` the pointee.
    pub fn align_of_pointee<T>(_: *const T) -> usize {
        core::mem::align_of::<T>()
    }

    include!(concat!(env!("OUT_DIR"), "/layout_rust.rs"));

    #[repr(C)]
    struct CEntry {
        ty: *const c_char,
        field: *const c_char,
        a: i64,
        b: i64,
        c: i64,
        kind: c_int,
    }

    extern "C" {
        static m5dv_layout_c: [CEntry; 0];
        static m5dv_layout_c_len: c_ulong;
        static m5dv_layout_c_version: c_int;
    }

    /// One entry of the C probe, owned.
    #[derive(Clone, Debug)]
    pub struct CItem {
        /// Type or constant name.
        pub ty: String,
        /// Field name.
        pub field: Option<String>,
        /// See [`Kind`].
        pub a: i64,
        /// See [`Kind`].
        pub b: i64,
        /// See [`Kind`].
        pub c: i64,
        /// What it is.
        pub kind: Kind,
    }

    /// The C probe's table, as compiled against the headers under test.
    pub fn c_table() -> Vec<CItem> {
        // SAFETY: the generated C defines the array with m5dv_layout_c_len entries whose
        // strings are static NUL-terminated literals (or NULL for `field`).
        unsafe {
            let base = core::ptr::addr_of!(m5dv_layout_c).cast::<CEntry>();
            (0..m5dv_layout_c_len as usize)
                .map(|i| {
                    let e = &*base.add(i);
                    CItem {
                        ty: CStr::from_ptr(e.ty).to_string_lossy().into_owned(),
                        field: (!e.field.is_null()).then(|| CStr::from_ptr(e.field).to_string_lossy().into_owned()),
                        a: e.a,
                        b: e.b,
                        c: e.c,
                        kind: match e.kind {
                            0 => Kind::Type,
                            1 => Kind::Field,
                            2 => Kind::Const,
                            _ => Kind::Enum,
                        },
                    }
                })
                .collect()
        }
    }

    /// The rdma-core version the C probe was built for.
    pub fn c_version() -> i32 {
        // SAFETY: a plain `const int` defined by the generated probe.
        unsafe { m5dv_layout_c_version }
    }

    fn key(ty: &str, field: Option<&str>) -> String {
        match field {
            Some(f) => format!("{ty}.{f}"),
            None => ty.to_string(),
        }
    }

    /// Every C item compared with its Rust twin: the rules of the layout test.
    ///
    /// Types: Rust size >= C size (newest layout; growth is append-only), alignment equal.
    /// Fields: offset, size and alignment equal. Constants: value equal. Enums: width and
    /// signedness equal. Returns one line per violation.
    pub fn compare(c: &[CItem], rust: &[Entry]) -> Vec<String> {
        let rust: BTreeMap<String, &Entry> = rust.iter().map(|e| (key(e.ty, e.field), e)).collect();
        let mut errors = Vec::new();
        for item in c {
            let k = key(&item.ty, item.field.as_deref());
            let Some(r) = rust.get(&k) else {
                errors.push(format!("{k}: in the C probe but not measured on the Rust side"));
                continue;
            };
            match item.kind {
                Kind::Type => {
                    if r.a < item.a {
                        errors.push(format!("{k}: Rust size {} < C size {} (the library would write past it)", r.a, item.a));
                    }
                    if r.b != item.b {
                        errors.push(format!("{k}: Rust alignment {} != C alignment {}", r.b, item.b));
                    }
                }
                Kind::Field => {
                    if (r.a, r.b, r.c) != (item.a, item.b, item.c) {
                        errors.push(format!(
                            "{k}: Rust offset/size/align {}/{}/{} != C {}/{}/{}",
                            r.a, r.b, r.c, item.a, item.b, item.c
                        ));
                    }
                }
                Kind::Const => {
                    if r.a != item.a {
                        errors.push(format!("{k}: Rust value {:#x} != C value {:#x}", r.a, item.a));
                    }
                }
                Kind::Enum => {
                    if (r.a, r.b) != (item.a, item.b) {
                        errors.push(format!("{k}: Rust size/signed {}/{} != C {}/{}", r.a, r.b, item.a, item.b));
                    }
                }
            }
        }
        errors
    }

    /// Checks that the C fields known to Rust cover every struct of the header, leaving only
    /// alignment padding: a field the header has and Rust lacks shows up as a gap, an overlap or
    /// a tail. Unions: the largest member, rounded to the alignment, is the size.
    pub fn coverage_gaps(c: &[CItem], unions: &[&str]) -> Vec<String> {
        let mut errors = Vec::new();
        for ty in c.iter().filter(|i| i.kind == Kind::Type) {
            let mut fields: Vec<&CItem> = c.iter().filter(|i| i.kind == Kind::Field && i.ty == ty.ty).collect();
            fields.sort_by_key(|f| f.a);
            let (size, align) = (ty.a, ty.b);
            if unions.contains(&ty.ty.as_str()) {
                let largest = fields.iter().map(|f| f.b).max().unwrap_or(0);
                if (largest + align - 1) / align * align != size {
                    errors.push(format!("union {}: members reach {largest} bytes but the union has {size}", ty.ty));
                }
                continue;
            }
            let mut end = 0;
            for f in &fields {
                let name = f.field.as_deref().unwrap_or("?");
                if f.a < end {
                    errors.push(format!("{}.{name}: overlaps the previous field (offset {} < {end})", ty.ty, f.a));
                } else if f.a - end >= f.c {
                    errors.push(format!(
                        "{}.{name}: {} unexplained bytes before it at offset {end}: the header has a field Rust lacks",
                        ty.ty,
                        f.a - end
                    ));
                }
                end = end.max(f.a + f.b);
            }
            if size - end >= align {
                errors.push(format!(
                    "{}: {} unexplained bytes after the last field (offset {end} of {size}): the header has a field Rust lacks",
                    ty.ty,
                    size - end
                ));
            }
        }
        errors
    }

    /// Keeps `raw` referenced for the generated table.
    #[doc(hidden)]
    pub fn _raw_link() -> usize {
        core::mem::size_of::<raw::ibv_sge>()
    }
}
