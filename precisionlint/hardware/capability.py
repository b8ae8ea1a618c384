"""Cards that are not in the table: their capabilities from the compute capability or the gfx ISA, and the
spellings that name a card by it (`cc8.9`, `sm_89`, `8.9`, `gfx942`)."""

from __future__ import annotations

import re

from precisionlint.hardware.gpu import AMD, NVIDIA, Gpu, UnknownGpuError

_ARCH_BY_CC = (
    ((12, 0), "Blackwell (consumer)"),
    ((10, 0), "Blackwell"),
    ((9, 0), "Hopper"),
    ((8, 9), "Ada Lovelace"),
    ((8, 0), "Ampere"),
    ((7, 5), "Turing"),
    ((7, 0), "Volta"),
    ((6, 0), "Pascal"),
    ((5, 0), "Maxwell"),
    ((0, 0), "pre-Maxwell"),
)

# gfx ISA -> (architecture, bf16 matrix, xf32/tf32, fp8)
_AMD_ARCH = {
    "gfx908": ("CDNA", True, False, False),
    "gfx90a": ("CDNA 2", True, False, False),
    "gfx940": ("CDNA 3", True, True, True),
    "gfx941": ("CDNA 3", True, True, True),
    "gfx942": ("CDNA 3", True, True, True),
    "gfx950": ("CDNA 4", True, False, True),  # CDNA 4 dropped XF32
}


def architecture_of(cc: tuple[int, int]) -> str:
    if cc[0] == 11:
        return "Blackwell (Thor)"
    for floor, name in _ARCH_BY_CC:
        if cc >= floor:
            return name
    return "unknown"


def capabilities(cc: tuple[int, int] | None, gfx_arch: str | None = None) -> tuple[bool, bool, bool]:
    """(native bf16, tf32, fp8) from an NVIDIA compute capability or an AMD gfx ISA name."""
    if cc is not None and not gfx_arch:
        return cc >= (8, 0), cc >= (8, 0), cc >= (8, 9)
    if gfx_arch:
        base = gfx_arch.split(":", 1)[0].lower()
        if base in _AMD_ARCH:
            _, bf16, tf32, fp8 = _AMD_ARCH[base]
            return bf16, tf32, fp8
        # RDNA 3/4 (gfx11xx, gfx12xx) have bf16 WMMA; older GCN/RDNA have no bf16 matrix path.
        return base.startswith(("gfx11", "gfx12")), False, base.startswith("gfx12")
    return False, False, False


def gpu_from_capability(name: str, cc: tuple[int, int] | None, gfx_arch: str | None = None,
                        memory_gb: float | None = None) -> Gpu:
    """A Gpu for a card that is not in the table: capabilities from its architecture, no peak figures."""
    bf16, tf32, fp8 = capabilities(cc, gfx_arch)
    if gfx_arch:
        base = gfx_arch.split(":", 1)[0].lower()
        arch = _AMD_ARCH.get(base, (base,))[0]
        return Gpu(name, AMD, arch, None, bf16, tf32, fp8, {}, "derived from the gfx ISA reported by the driver",
                   gfx_arch=base, memory_gb=memory_gb, in_table=False)
    arch = architecture_of(cc) if cc else "unknown"
    return Gpu(name, NVIDIA, arch, cc, bf16, tf32, fp8, {},
               "derived from the compute capability reported by the driver", memory_gb=memory_gb, in_table=False)



def parse_cc(text: str) -> tuple[int, int] | None:
    match = re.match(r"^\s*(\d+)\.(\d+)\s*$", text)
    return (int(match.group(1)), int(match.group(2))) if match else None



# "cc8.9", "cc 8.9", "8.9", "sm_89", "sm89", "compute_89", "sm_100a": any NVIDIA card by compute capability.
_CAPABILITY = re.compile(r"^(?:cc\s*)?(\d{1,2})\.(\d)$|^(?:sm|compute)_?(\d{1,2})(\d)[af]?$", re.IGNORECASE)
_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$", re.IGNORECASE)

# Every compute capability an NVIDIA GPU has had (CUDA's sm_XX targets and NVIDIA's CUDA GPUs table, 2026):
# a name such as sm_999 or cc 9.9 describes no card, and its capabilities would be guesses.
KNOWN_CAPABILITIES = frozenset({
    (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 2), (3, 5), (3, 7), (5, 0), (5, 2), (5, 3),
    (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 1),
    (10, 3), (11, 0), (12, 0), (12, 1),
})
# AMD ISAs by generation: GCN 1-5 and CDNA are gfx6xx-gfx9xx, RDNA 1-4 gfx10xx-gfx12xx (LLVM's AMDGPU targets).
_GFX_GENERATIONS = re.compile(r"^gfx(?:[6-9][0-9a-f]{2}|1[0-2][0-9a-f]{2})$", re.IGNORECASE)


def gpu_from_spec(text: str) -> Gpu | None:
    """A card described by its compute capability (`cc8.9`, `sm_89`, `8.9`) or AMD gfx ISA (`gfx942`). Raises
    UnknownGpuError for a capability or ISA that is well formed but that no card has (`sm_999`, `gfx9999`)."""
    spec = text.strip()
    match = _CAPABILITY.match(spec)
    if match:
        major, minor = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        cc = (int(major), int(minor))
        if cc not in KNOWN_CAPABILITIES:
            known = ", ".join(f"{a}.{b}" for a, b in sorted(KNOWN_CAPABILITIES) if a >= 7)
            raise UnknownGpuError(spec, (), f"no NVIDIA GPU has compute capability {cc[0]}.{cc[1]} (those of "
                                  f"Volta and later: {known})")
        return gpu_from_capability(f"compute capability {cc[0]}.{cc[1]}", cc)
    if _GFX.match(spec):
        if not _GFX_GENERATIONS.match(spec):
            raise UnknownGpuError(spec, (), "no AMD GPU has this ISA (they run from gfx6xx to gfx12xx, as gfx942)")
        return gpu_from_capability(spec.lower(), None, spec.lower())
    return None

