//! Opening the GPU and building the kernels: once `driver` has found the CUDA libraries,
//! creates the context and one stream; then, each when first asked for ([`Device::module`]: an
//! engine asks for its arithmetic's unit only), compiles a unit of kernels/manifest.txt with
//! NVRTC (the unit's file with the headers it includes as named include sources) for the
//! device's own architecture and caches its cubin on disk, keyed by the unit's files, GPU name,
//! driver and NVRTC versions, so a second start is instant.

use super::driver::{device_count, driver_version, libraries_present, nvrtc_version};
use crate::engine::EngineError;
use crate::trace;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// Every file of kernels/ (path under it, text), embedded by build.rs.
const KERNEL_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/kernel_files.rs"));

/// The NVRTC units (kernels/manifest.txt): what is compiled, one module each.
const MANIFEST: &str = include_str!("../../kernels/manifest.txt");

/// The field-rate kernels' unit (`gpu-selftest field-rate`), a module of its own so that no
/// engine start compiles them (they add ~3 s, 14%, to a first compilation).
pub(crate) const RATE_UNIT: &str = "rate";
/// The field operations' checks (`gpu-selftest kernels`, `m61m31`): no engine start compiles them.
pub(crate) const CHECK_UNIT: &str = "check";

/// The file of `unit` in the manifest (`name file` lines; `#` starts a comment).
fn unit_file(unit: &str) -> Result<&'static str, EngineError> {
    MANIFEST
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").split_whitespace().collect::<Vec<_>>())
        .find_map(|w| match w[..] {
            [name, file] if name == unit => Some(file),
            _ => None,
        })
        .ok_or_else(|| EngineError::Other(format!("kernels/manifest.txt has no unit {unit}")))
}

/// A unit's source: its file's text and every header it includes, transitively (`#include
/// "path"`, path under kernels/), by name, as NVRTC takes them.
struct Unit {
    file: String,
    text: String,
    headers: Vec<(String, String)>,
}

impl Unit {
    /// `unit` of the manifest, its files read by `read` (a path under kernels/ to its text).
    fn gather(unit: &str, read: impl Fn(&str) -> Result<String, EngineError>) -> Result<Unit, EngineError> {
        let file = unit_file(unit)?.to_string();
        let text = read(&file)?;
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut todo = includes(&text);
        while let Some(name) = todo.pop() {
            if headers.iter().all(|(h, _)| *h != name) {
                let header = read(&name)?;
                todo.extend(includes(&header));
                headers.push((name, header));
            }
        }
        headers.sort();
        Ok(Unit { file, text, headers })
    }

    /// `unit` from the built-in files, or, for kernel development, from the files of the same
    /// paths under the folder MERSENNE_CERT_KERNEL_DIR (so that variants can be timed on a GPU
    /// machine without rebuilding the binaries; the disk cache is keyed by the text, so they
    /// never mix).
    fn load(unit: &str) -> Result<Unit, EngineError> {
        match std::env::var_os("MERSENNE_CERT_KERNEL_DIR") {
            None => Unit::gather(unit, |name| {
                KERNEL_FILES
                    .iter()
                    .find(|(file, _)| *file == name)
                    .map(|(_, text)| text.to_string())
                    .ok_or_else(|| EngineError::Other(format!("kernel source {name}: not in kernels/")))
            }),
            Some(dir) => {
                let dir = PathBuf::from(dir);
                Unit::gather(unit, |name| {
                    let path = dir.join(name);
                    std::fs::read_to_string(&path)
                        .map_err(|e| EngineError::Other(format!("kernel source {}: {e}", path.display())))
                })
            }
        }
    }

    /// What the compiled unit depends on besides the GPU and the compiler: every file's name
    /// and text (a header's change changes it).
    fn key_text(&self) -> String {
        std::iter::once((&self.file, &self.text))
            .chain(self.headers.iter().map(|(n, t)| (n, t)))
            .map(|(name, text)| format!("{name}\n{}\n{text}\n", text.len()))
            .collect()
    }
}

/// The paths of a kernel file's `#include "path"` lines.
fn includes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("#include")?.trim().strip_prefix('"')?.split('"').next())
        .map(str::to_string)
        .collect()
}

pub(crate) fn cuda_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> EngineError + '_ {
    move |e| EngineError::Cuda(format!("{what}: {e:?}"))
}

/// An open GPU: context, stream and a description; the kernels of each NVRTC unit are built
/// (or read from the disk cache) when first asked for ([`Device::module`]), so that a start
/// builds only the units its arithmetic launches.
pub(crate) struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    /// Launch with programmatic dependent launch (sm_90 and later, unless
    /// MERSENNE_CERT_NO_PDL is set: for measuring what it gains).
    pub pdl: bool,
    /// The architecture the kernels are compiled for ("sm_90").
    arch: String,
    /// Total memory in MiB.
    mem_mib: usize,
    /// The units loaded so far, each once.
    modules: Mutex<Vec<Loaded>>,
}

/// A unit's module (built with `preamble`), loaded, and whether its cubin came from the disk
/// cache.
struct Loaded {
    unit: &'static str,
    preamble: String,
    module: Arc<CudaModule>,
    cached: bool,
}
/// The device time of the work queued on a device's stream between `start` and `ms`, from
/// CUDA events (for benchmarks and tuning).
pub(crate) struct Timer {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
}

impl Timer {
    pub fn start(dev: &Device) -> Result<Timer, EngineError> {
        let start = dev.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(cuda_err("event"))?;
        start.record(&dev.stream).map_err(cuda_err("event"))?;
        Ok(Timer { ctx: dev.ctx.clone(), stream: dev.stream.clone(), start })
    }

    /// Milliseconds from the start to the end of everything queued since (waits for it).
    pub fn ms(&self) -> Result<f64, EngineError> {
        let end = self.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(cuda_err("event"))?;
        end.record(&self.stream).map_err(cuda_err("event"))?;
        Ok(f64::from(self.start.elapsed_ms(&end).map_err(cuda_err("event"))?))
    }
}

/// Compile a unit to a cubin for `arch` (e.g. "sm_90") with NVRTC, its headers passed as
/// named include sources.
fn compile(unit: &Unit, arch: &str) -> Result<Vec<u8>, EngineError> {
    use cudarc::nvrtc::{result, sys as nv};
    let err = |what: &str, e: result::NvrtcError| EngineError::Cuda(format!("NVRTC {what}: {e:?}"));
    let c_string =
        |s: &str| CString::new(s).map_err(|_| EngineError::Other(format!("kernel source {s:.40} holds a NUL")));
    let (src, name) = (c_string(&unit.text)?, c_string(&unit.file)?);
    let texts = unit.headers.iter().map(|(_, text)| c_string(text)).collect::<Result<Vec<_>, _>>()?;
    let names = unit.headers.iter().map(|(name, _)| c_string(name)).collect::<Result<Vec<_>, _>>()?;
    let (text_ptrs, name_ptrs): (Vec<_>, Vec<_>) =
        texts.iter().zip(&names).map(|(t, n)| (t.as_ptr(), n.as_ptr())).unzip();
    let mut prog = std::mem::MaybeUninit::uninit();
    // SAFETY: every pointer is to a NUL-terminated string alive until this call returns (NVRTC
    // copies them), and the two arrays hold headers.len() entries each.
    let prog = unsafe {
        nv::nvrtcCreateProgram(
            prog.as_mut_ptr(),
            src.as_ptr(),
            name.as_ptr(),
            text_ptrs.len() as i32,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
        .result()
        .map_err(|e| err("create", e))?;
        prog.assume_init()
    };
    // MERSENNE_CERT_PTXAS_LOG=1 prints ptxas's register/spill report of a fresh compilation.
    let report = std::env::var_os("MERSENNE_CERT_PTXAS_LOG").is_some();
    // --device-int128: the M61·M31 carry walk (kernels/m61m31/pipeline.cuh) takes i128 convolution outputs.
    let mut options = vec![format!("--gpu-architecture={arch}"), "--std=c++17".into(), "--device-int128".into()];
    if report {
        options.push("--ptxas-options=-v".into());
    }
    // SAFETY: prog is live until destroy_program below; buffers are sized from NVRTC's answers.
    let out = unsafe {
        let compiled = result::compile_program(prog, &options);
        let outcome = match compiled {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| l.iter().map(|&c| c as u8 as char).collect::<String>())
                    .unwrap_or_default();
                Err(EngineError::Cuda(format!("NVRTC compile failed ({e:?}): {log}")))
            }
            Ok(()) => {
                if report {
                    let log = result::get_program_log(prog).unwrap_or_default();
                    eprintln!("{}", log.iter().map(|&c| c as u8 as char).collect::<String>());
                }
                let mut size = 0usize;
                nv::nvrtcGetCUBINSize(prog, &mut size).result().map_err(|e| err("cubin size", e))?;
                let mut cubin = vec![0u8; size];
                nv::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()).result().map_err(|e| err("cubin", e))?;
                Ok(cubin)
            }
        };
        let _ = result::destroy_program(prog);
        outcome
    };
    out
}

/// A file of the disk cache (kernels, tuning), named by what it belongs to.
pub(crate) fn cache_path(file: &str) -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("mersenne-cert").join(file))
}

/// What a compiled unit depends on: its files (the unit's and every header's), the GPU, the
/// driver and NVRTC.
fn kernel_key(unit: &Unit, arch: &str, name: &str) -> String {
    let (nv_major, nv_minor) = nvrtc_version();
    let key_text = format!("{}\n{arch}\n{name}\n{}\n{nv_major}.{nv_minor}", unit.key_text(), driver_version());
    blake3::hash(key_text.as_bytes()).to_hex()[..32].to_string()
}

/// The cubin for this device: from the disk cache when present, else compiled and stored.
fn cubin_for(unit: &Unit, arch: &str, key: &str) -> Result<(Vec<u8>, bool), EngineError> {
    let path = cache_path(&format!("kernels-{key}.cubin"));
    if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        return Ok((bytes, true));
    }
    let cubin = compile(unit, arch)?;
    if let Some(p) = path {
        // A cache that cannot be written only costs the next start a compilation.
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        let stored = p.parent().map(std::fs::create_dir_all).transpose().is_ok()
            && std::fs::write(&tmp, &cubin).is_ok()
            && std::fs::rename(&tmp, &p).is_ok();
        if !stored {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok((cubin, false))
}

impl Device {
    /// Open GPU 0 (no kernels built yet).
    pub fn open() -> Result<Device, EngineError> {
        Device::open_ordinal(0)
    }

    /// Open GPU `ordinal` (CUDA's numbering, as `nvidia-smi` lists them unless
    /// CUDA_VISIBLE_DEVICES says otherwise): its context and stream; no kernels built yet.
    pub fn open_ordinal(ordinal: usize) -> Result<Device, EngineError> {
        trace::mark("gpu: opening");
        libraries_present()?;
        let count = device_count()?;
        if ordinal >= count {
            return Err(EngineError::NoGpu(format!("there is no GPU {ordinal}: {count} CUDA device(s) here")));
        }
        let ctx =
            CudaContext::new(ordinal).map_err(|e| EngineError::NoGpu(format!("cannot open GPU {ordinal}: {e:?}")))?;
        trace::mark("gpu: cuda context");
        super::warm::taken_over(ordinal);
        // Buffers are used on one stream only; no cross-stream event bookkeeping is needed, and
        // without it launches can be captured into a graph.
        // SAFETY: every buffer of this context is created and used on `stream` alone.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(cuda_err("stream"))?;
        trace::mark("gpu: stream");
        let name = ctx.name().map_err(cuda_err("device name"))?;
        let (major, minor) = ctx.compute_capability().map_err(cuda_err("compute capability"))?;
        let arch = format!("sm_{major}{minor}");
        let mem_mib = ctx.total_mem().map_err(cuda_err("memory size"))? >> 20;
        trace::mark("gpu: device queried");
        let pdl = major >= 9 && std::env::var_os("MERSENNE_CERT_NO_PDL").is_none();
        Ok(Device { ctx, stream, name, pdl, arch, mem_mib, modules: Mutex::new(Vec::new()) })
    }

    /// The module of `unit` (kernels/manifest.txt): built from the disk cache or by NVRTC on the
    /// first call, the same module after.
    pub fn module(&self, unit: &'static str) -> Result<Arc<CudaModule>, EngineError> {
        self.module_with(unit, "")
    }

    /// `unit` compiled with `preamble` (`#define` lines) in front of its file: a build of its
    /// kernels for one shape of plan (kernels/fp64/pipeline.cuh), cached under its own key; each
    /// (unit, preamble) is built once.
    pub fn module_with(&self, unit: &'static str, preamble: &str) -> Result<Arc<CudaModule>, EngineError> {
        let mut loaded = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = loaded.iter().find(|l| l.unit == unit && l.preamble == preamble) {
            return Ok(l.module.clone());
        }
        let mut source = Unit::load(unit)?;
        source.text.insert_str(0, preamble);
        let key = kernel_key(&source, &self.arch, &self.name);
        trace::mark("gpu: sources hashed, cache key (nvrtc loaded)");
        let (module, cached) = build_module(&self.ctx, &source, &self.arch, &key)?;
        loaded.push(Loaded { unit, preamble: preamble.to_string(), module: module.clone(), cached });
        Ok(module)
    }

    /// The cache key of `unit`'s kernels on this GPU (its files, GPU, driver, NVRTC), without
    /// building them: tuning results of the unit's passes are kept under it.
    pub fn unit_key(&self, unit: &str) -> Result<String, EngineError> {
        Ok(kernel_key(&Unit::load(unit)?, &self.arch, &self.name))
    }

    /// Name, architecture, memory, driver, whether the kernels built so far came from the cache,
    /// and the launch mode.
    pub fn description(&self) -> String {
        let loaded = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        let kernels = match loaded.iter().map(|l| (l.unit, l.cached)).collect::<Vec<_>>() {
            v if v.is_empty() => String::new(),
            v if v.iter().all(|&(_, cached)| cached) => "kernels from cache, ".into(),
            v => {
                let compiled: Vec<&str> = v.iter().filter(|&&(_, c)| !c).map(|&(u, _)| u).collect();
                format!("kernels compiled ({}), ", compiled.join(", "))
            }
        };
        format!(
            "{} ({}, {} MiB, driver {}, {kernels}{})",
            self.name,
            self.arch,
            self.mem_mib,
            driver_version(),
            if self.pdl { "dependent launch" } else { "plain launch" }
        )
    }
}

/// The kernels `prefix` R `suffix` of `module` for R = 1 ..= max (R: a pass's or round's stages).
pub(crate) fn functions(
    module: &Arc<CudaModule>,
    prefix: &str,
    suffix: &str,
    max: u32,
) -> Result<Vec<CudaFunction>, EngineError> {
    (1..=max).map(|r| function(module, &format!("{prefix}{r}{suffix}"))).collect()
}

/// The kernel `name` of `module`.
pub(crate) fn function(module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, EngineError> {
    module.load_function(name).map_err(cuda_err(name))
}

/// The module of a compilation unit: its cubin from the disk cache when present (compiled afresh
/// if that entry does not load), else compiled and stored; and whether it came from the cache.
fn build_module(
    ctx: &Arc<CudaContext>,
    unit: &Unit,
    arch: &str,
    key: &str,
) -> Result<(Arc<CudaModule>, bool), EngineError> {
    let (cubin, cached) = cubin_for(unit, arch, key)?;
    trace::mark(if cached { "gpu: cubin read from cache" } else { "gpu: cubin compiled" });
    let module = match ctx.load_module(Ptx::from_binary(cubin)) {
        Ok(m) => m,
        // A damaged cache entry: compile afresh.
        Err(_) if cached => ctx.load_module(Ptx::from_binary(compile(unit, arch)?)).map_err(cuda_err("module"))?,
        Err(e) => return Err(cuda_err("module")(e)),
    };
    trace::mark("gpu: module loaded");
    Ok((module, cached))
}

/// The built-in text of kernels/`name` (for the tests of the units' kernel lists).
#[cfg(test)]
pub(crate) fn kernel_file(name: &str) -> &'static str {
    KERNEL_FILES.iter().find(|(f, _)| *f == name).map(|(_, t)| *t).unwrap_or_else(|| panic!("{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::four_step::{FourStep, GoldilocksFs};
    use crate::gpu::goldilocks::UNIT as GOLDILOCKS_UNIT;
    use crate::gpu::m61m31::UNIT as M61M31_UNIT;

    /// Every unit of the manifest gathers from the built-in files: its headers are the ones it
    /// includes, transitively, each once; the engine's units share only common/, and neither
    /// holds the field checks (the check unit does).
    #[test]
    fn the_manifest_units_gather_their_headers() {
        let gl = Unit::load(GOLDILOCKS_UNIT).unwrap();
        let names = |u: &Unit| u.headers.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(gl.file, "goldilocks/engine.cu");
        assert!(names(&gl).contains(&"goldilocks/field.cuh".to_string()), "{:?}", names(&gl));
        assert!(names(&gl).contains(&"common/types.cuh".to_string()), "{:?}", names(&gl));
        let mm = Unit::load(M61M31_UNIT).unwrap();
        assert!(names(&mm).iter().all(|n| !n.starts_with("goldilocks/")), "{:?}", names(&mm));
        assert!(names(&gl).iter().all(|n| !n.starts_with("m61m31/")), "{:?}", names(&gl));
        let fp = Unit::load(crate::gpu::four_step::Fp64::UNIT).unwrap();
        assert_eq!(fp.file, "fp64/engine.cu");
        assert!(names(&fp).contains(&"fp64/field.cuh".to_string()), "{:?}", names(&fp));
        assert!(names(&fp).iter().all(|n| !n.starts_with("goldilocks/") && !n.starts_with("m61m31/")));
        for engine in [&gl, &mm, &fp] {
            assert!(
                names(engine).iter().all(|n| !n.ends_with("field_check.cuh") && !n.ends_with("field_rate.cuh")),
                "{:?}",
                names(engine)
            );
        }
        // Goldilocks on the FP64 arithmetic's pipeline: the same common/pipeline.cuh.
        let gfs = Unit::load(GoldilocksFs::UNIT).unwrap();
        assert!(names(&gfs).contains(&"common/pipeline.cuh".to_string()), "{:?}", names(&gfs));
        assert!(names(&fp).contains(&"common/pipeline.cuh".to_string()), "{:?}", names(&fp));
        assert!(names(&gfs).iter().all(|n| !n.starts_with("fp64/")), "{:?}", names(&gfs));
        let check = Unit::load(CHECK_UNIT).unwrap();
        for h in ["goldilocks/field_check.cuh", "m61m31/field_check.cuh"] {
            assert!(names(&check).contains(&h.to_string()), "{:?}", names(&check));
        }
        let rate = Unit::load(RATE_UNIT).unwrap();
        assert!(names(&rate).contains(&"m61m31/field_rate.cuh".to_string()), "{:?}", names(&rate));
        // Every file under kernels/ but the manifest is some unit's file or header.
        let used: Vec<String> = [&gl, &mm, &fp, &gfs, &check, &rate]
            .iter()
            .flat_map(|u| std::iter::once(u.file.clone()).chain(names(u)))
            .collect();
        for (f, _) in KERNEL_FILES {
            assert!(*f == "manifest.txt" || used.iter().any(|u| u == f), "kernels/{f} is compiled by no unit");
        }
        assert!(unit_file("nonesuch").is_err());
    }

    /// A header's text is part of the cache key: a change to a file the unit only includes
    /// changes it, as does a change to the unit's own file.
    #[test]
    fn a_header_change_changes_the_cache_key() {
        let read = |edit: &'static str| {
            move |name: &str| {
                let text = kernel_file(name).to_string();
                Ok(if name == edit { text + "// edited\n" } else { text })
            }
        };
        let key = |u: &Unit| u.key_text();
        let plain = Unit::gather(GOLDILOCKS_UNIT, read("")).unwrap();
        assert_eq!(key(&plain), key(&Unit::load(GOLDILOCKS_UNIT).unwrap()));
        for edited in ["common/types.cuh", "goldilocks/carry.cuh", "goldilocks/engine.cu"] {
            assert_ne!(key(&Unit::gather(GOLDILOCKS_UNIT, read(edited)).unwrap()), key(&plain), "{edited}");
        }
        // A file the unit does not include leaves it alone.
        assert_eq!(key(&Unit::gather(GOLDILOCKS_UNIT, read("m61m31/fields.cuh")).unwrap()), key(&plain));
        assert_eq!(includes("#include \"a/b.cuh\"\n  #include \"c.cuh\" // x\n#define X"), ["a/b.cuh", "c.cuh"]);
    }
}
