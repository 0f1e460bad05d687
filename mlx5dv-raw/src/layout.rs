//! Size and alignment of every struct, pinned per target architecture.
