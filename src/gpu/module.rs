//! Opening the GPU and building the kernels: checks that the CUDA driver and NVRTC libraries
//! exist (else [`EngineError::NoGpu`], never a panic), creates the context and one stream,
//! compiles kernels/*.cu with NVRTC for the device's own architecture and caches the cubin on
//! disk, keyed by source hash, GPU name, driver and NVRTC versions, so a second start is instant.

use crate::engine::EngineError;
use crate::trace;
use crate::transform::plan::MAX_SHARED_LOG2;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::Arc;

/// Kernel sources (file name in kernels/, text), in the order they are concatenated into one
/// compilation unit.
const SOURCES: [(&str, &str); 10] = [
    ("goldilocks.cuh", include_str!("../../kernels/goldilocks.cuh")),
    ("mersenne_fields.cuh", include_str!("../../kernels/mersenne_fields.cuh")),
    ("carry.cu", include_str!("../../kernels/carry.cu")),
    ("stages.cuh", include_str!("../../kernels/stages.cuh")),
    ("ntt_block.cu", include_str!("../../kernels/ntt_block.cu")),
    ("small.cu", include_str!("../../kernels/small.cu")),
    ("fault_inject.cu", include_str!("../../kernels/fault_inject.cu")),
    ("weights.cu", include_str!("../../kernels/weights.cu")),
    ("field_check.cu", include_str!("../../kernels/field_check.cu")),
    ("m61m31.cu", include_str!("../../kernels/m61m31.cu")),
];

/// The field-rate kernels' compilation unit (`gpu-selftest field-rate`), a module of its own so
/// that no engine start compiles them (they add ~3 s, 14%, to a first compilation).
const RATE_SOURCES: [(&str, &str); 6] = [
    ("goldilocks.cuh", include_str!("../../kernels/goldilocks.cuh")),
    ("stages.cuh", include_str!("../../kernels/stages.cuh")),
    ("field_rate.cu", include_str!("../../kernels/field_rate.cu")),
    ("mersenne_fields.cuh", include_str!("../../kernels/mersenne_fields.cuh")),
    ("field_rate_m61m31.cu", include_str!("../../kernels/field_rate_m61m31.cu")),
    ("fp64/field_fp64.cu", include_str!("../../kernels/fp64/field_fp64.cu")),
];

/// The compilation unit: the built-in sources, or, for kernel development, the files of the same
/// names in the folder MERSENNE_CERT_KERNEL_DIR (so that variants can be timed on a GPU machine
/// without rebuilding the binaries; the disk cache is keyed by the text, so they never mix).
fn source(files: &[(&str, &str)]) -> Result<String, EngineError> {
    let Some(dir) = std::env::var_os("MERSENNE_CERT_KERNEL_DIR") else {
        return Ok(files.iter().map(|(_, text)| *text).collect());
    };
    let dir = PathBuf::from(dir);
    files
        .iter()
        .map(|(name, _)| {
            let path = dir.join(name);
            std::fs::read_to_string(&path)
                .map_err(|e| EngineError::Other(format!("kernel source {}: {e}", path.display())))
        })
        .collect()
}

pub(crate) fn cuda_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> EngineError + '_ {
    move |e| EngineError::Cuda(format!("{what}: {e:?}"))
}

/// The most stages per line of the _late kernels (kernels/ntt_block.cu), and so the tuner's
/// largest candidate; the kernels of 9 and 10 stages would add ~14 s to each compilation.
pub(crate) const LATE_MAX_STAGES: u32 = 8;
/// The most stages per round of the one-block kernels (small_r1 .. small_r4, kernels/small.cu).
pub(crate) const SMALL_MAX_STAGES: u32 = 4;

/// Every kernel the engine launches.
pub(crate) struct Kernels {
    /// ntt[R − 1]: the ntt_r<R> kernel (R radix-2 stages per line), the row pass of any op.
    pub ntt: Vec<CudaFunction>,
    /// The column passes and a squaring's row pass, letting the next kernel launch half way.
    pub early: PassKernels,
    /// The same, letting it launch only as their blocks exit (the kernels named _late), up to
    /// LATE_MAX_STAGES stages per line.
    pub late: PassKernels,
    /// small[V − 1]: the small_r<V> kernel (one block, rounds of V stages).
    pub small: Vec<CudaFunction>,
    pub flip_bit: CudaFunction,
    pub expand_weights: CudaFunction,
    pub field_ops: CudaFunction,
    pub field_ops_m61m31: CudaFunction,
    /// The M61·M31 arithmetic's kernels (kernels/m61m31.cu).
    pub mm: MmKernels,
}

/// The M61·M31 kernels (kernels/m61m31.cu), launched by src/gpu/pipeline_m61m31.rs.
pub(crate) struct MmKernels {
    pub weigh: CudaFunction,
    pub radix3: CudaFunction,
    /// passes[R − 1]: mm_pass_r<R>, R radix-2 stages over global memory.
    pub passes: Vec<CudaFunction>,
    pub block: CudaFunction,
    pub pair: CudaFunction,
    /// mm_core: forward block, pair step and inverse block in one launch (2^k lengths).
    pub core: CudaFunction,
    pub carry: CudaFunction,
}

/// The most stages of one mm_pass_r<R> kernel (kernels/m61m31.cu instantiates 1 ..= this): at
/// 2^22 on an H100 a pass of 4 stages took 80 µs (140 registers a thread), one of 3 took 42
/// (bench/notes/gpu.md, 2026-11-26).
pub(crate) const MM_PASS_MAX_STAGES: u32 = 3;

/// The column passes and a squaring's row pass (kernels/ntt_block.cu), of one launch trigger.
pub(crate) struct PassKernels {
    /// square_rows[R − 1]: ntt_sq_r<R>, the row pass of a squaring alone.
    pub square_rows: Vec<CudaFunction>,
    /// columns[R − 1]: ntt_col_r<R>, the column passes (of any op).
    pub columns: Vec<CudaFunction>,
}

/// An open GPU: context, stream, compiled kernels and a description.
pub(crate) struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub kernels: Kernels,
    pub description: String,
    pub name: String,
    /// Launch with programmatic dependent launch (sm_90 and later, unless
    /// MERSENNE_CERT_NO_PDL is set: for measuring what it gains).
    pub pdl: bool,
    /// The kernels' cache key (source, GPU, driver, NVRTC): tuning results are kept under it.
    pub kernel_key: String,
    /// The architecture the kernels are compiled for ("sm_90").
    arch: String,
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

fn driver_version() -> i32 {
    let mut v = 0i32;
    // SAFETY: plain out-parameter call into the driver, after is_culib_present.
    let _ = unsafe { sys::cuDriverGetVersion(&mut v) };
    v
}

fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: plain out-parameter call, after is_culib_present.
    let _ = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// Check that the libraries are there before anything in cudarc touches them.
fn libraries_present() -> Result<(), EngineError> {
    // SAFETY: these only try to dlopen the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(EngineError::NoGpu("the NVIDIA driver library (libcuda.so) was not found".into()));
    }
    trace::mark("gpu: libcuda present (dlopen)");
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(EngineError::NoGpu(
            "the CUDA run-time compiler library (libnvrtc.so, CUDA 13) was not found".into(),
        ));
    }
    trace::mark("gpu: libnvrtc present (dlopen, dlclose)");
    Ok(())
}

/// Compile the kernel source to a cubin for `arch` (e.g. "sm_90") with NVRTC.
fn compile(source: &str, arch: &str) -> Result<Vec<u8>, EngineError> {
    use cudarc::nvrtc::{result, sys as nv};
    let err = |what: &str, e: result::NvrtcError| EngineError::Cuda(format!("NVRTC {what}: {e:?}"));
    let src = CString::new(source).map_err(|_| EngineError::Other("kernel source holds a NUL".into()))?;
    let prog = result::create_program(&src, None).map_err(|e| err("create", e))?;
    // MERSENNE_CERT_PTXAS_LOG=1 prints ptxas's register/spill report of a fresh compilation.
    let report = std::env::var_os("MERSENNE_CERT_PTXAS_LOG").is_some();
    // --device-int128: the M61·M31 carry walk (kernels/m61m31.cu) takes i128 convolution outputs.
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

/// What the compiled kernels depend on: their source, the GPU, the driver and NVRTC.
fn kernel_key(source: &str, arch: &str, name: &str) -> String {
    let (nv_major, nv_minor) = nvrtc_version();
    let key_text = format!("{source}\n{arch}\n{name}\n{}\n{nv_major}.{nv_minor}", driver_version());
    blake3::hash(key_text.as_bytes()).to_hex()[..32].to_string()
}

/// The cubin for this device: from the disk cache when present, else compiled and stored.
fn cubin_for(source: &str, arch: &str, key: &str) -> Result<(Vec<u8>, bool), EngineError> {
    let path = cache_path(&format!("kernels-{key}.cubin"));
    if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        return Ok((bytes, true));
    }
    let cubin = compile(source, arch)?;
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

fn load_kernels(module: &Arc<CudaModule>) -> Result<Kernels, EngineError> {
    let f = |name: &str| module.load_function(name).map_err(cuda_err(name));
    // One kernel per stage count R = 1..=max, named prefix R suffix (R: a pass's or round's stages).
    let all = |prefix: &str, suffix: &str, max: u32| -> Result<Vec<CudaFunction>, EngineError> {
        (1..=max).map(|r| f(&format!("{prefix}{r}{suffix}"))).collect()
    };
    let pass_kernels = |suffix: &str, max: u32| -> Result<PassKernels, EngineError> {
        Ok(PassKernels { square_rows: all("ntt_sq_r", suffix, max)?, columns: all("ntt_col_r", suffix, max)? })
    };
    Ok(Kernels {
        ntt: all("ntt_r", "", MAX_SHARED_LOG2)?,
        early: pass_kernels("", MAX_SHARED_LOG2)?,
        late: pass_kernels("_late", LATE_MAX_STAGES)?,
        small: all("small_r", "", SMALL_MAX_STAGES)?,
        flip_bit: f("flip_bit")?,
        expand_weights: f("expand_weights")?,
        field_ops: f("field_ops")?,
        field_ops_m61m31: f("field_ops_m61m31")?,
        mm: MmKernels {
            weigh: f("mm_weigh")?,
            radix3: f("mm_radix3")?,
            passes: all("mm_pass_r", "", MM_PASS_MAX_STAGES)?,
            block: f("mm_block")?,
            pair: f("mm_pair")?,
            core: f("mm_core")?,
            carry: f("mm_carry")?,
        },
    })
}

/// How many CUDA devices the driver sees (an error when the CUDA libraries are missing).
pub fn device_count() -> Result<usize, EngineError> {
    libraries_present()?;
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| EngineError::NoGpu(format!("cannot count CUDA devices: {e:?}")))
}

impl Device {
    /// Open GPU 0 and build the kernels.
    pub fn open() -> Result<Device, EngineError> {
        Device::open_ordinal(0)
    }

    /// Open GPU `ordinal` (CUDA's numbering, as `nvidia-smi` lists them unless
    /// CUDA_VISIBLE_DEVICES says otherwise) and build the kernels.
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
        let mem = ctx.total_mem().map_err(cuda_err("memory size"))? >> 20;
        trace::mark("gpu: device queried");
        let source = source(&SOURCES)?;
        let kernel_key = kernel_key(&source, &arch, &name);
        trace::mark("gpu: source hashed, cache key (nvrtc loaded)");
        let (module, cached) = build_module(&ctx, &source, &arch, &kernel_key)?;
        let kernels = load_kernels(&module)?;
        trace::mark("gpu: functions loaded");
        let pdl = major >= 9 && std::env::var_os("MERSENNE_CERT_NO_PDL").is_none();
        let description = format!(
            "{name} ({arch}, {mem} MiB, driver {}, kernels {}, {})",
            driver_version(),
            if cached { "from cache" } else { "compiled" },
            if pdl { "dependent launch" } else { "plain launch" }
        );
        Ok(Device { ctx, stream, kernels, description, name, pdl, kernel_key, arch })
    }

    /// The field-rate kernels' module (kernels/field_rate.cu, field_rate_m61m31.cu), compiled (or
    /// read from the cache) on demand.
    pub fn rate_module(&self) -> Result<Arc<CudaModule>, EngineError> {
        let source = source(&RATE_SOURCES)?;
        Ok(build_module(&self.ctx, &source, &self.arch, &kernel_key(&source, &self.arch, &self.name))?.0)
    }
}

/// The module of a compilation unit: its cubin from the disk cache when present (compiled afresh
/// if that entry does not load), else compiled and stored; and whether it came from the cache.
fn build_module(
    ctx: &Arc<CudaContext>,
    source: &str,
    arch: &str,
    key: &str,
) -> Result<(Arc<CudaModule>, bool), EngineError> {
    let (cubin, cached) = cubin_for(source, arch, key)?;
    trace::mark(if cached { "gpu: cubin read from cache" } else { "gpu: cubin compiled" });
    let module = match ctx.load_module(Ptx::from_binary(cubin)) {
        Ok(m) => m,
        // A damaged cache entry: compile afresh.
        Err(_) if cached => ctx.load_module(Ptx::from_binary(compile(source, arch)?)).map_err(cuda_err("module"))?,
        Err(e) => return Err(cuda_err("module")(e)),
    };
    trace::mark("gpu: module loaded");
    Ok((module, cached))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ntt kernels that kernels/ntt_block.cu instantiates are the ones load_kernels asks for:
    /// every stage count with its _late kernels up to LATE_MAX_STAGES, without them above.
    #[test]
    fn the_late_kernels_are_instantiated_up_to_late_max_stages() {
        let text = SOURCES.iter().find(|(name, _)| *name == "ntt_block.cu").map(|(_, t)| *t).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("NTT_KERNEL")).collect();
        let expected: Vec<String> = (1..=MAX_SHARED_LOG2)
            .map(
                |r| if r <= LATE_MAX_STAGES { format!("NTT_KERNEL_AND_LATE({r})") } else { format!("NTT_KERNEL({r})") },
            )
            .collect();
        assert_eq!(lines, expected);
        assert!(text.contains("#define NTT_KERNEL_AND_LATE(R) NTT_KERNEL(R) NTT_PASS_KERNELS(R, _late, true)"));
    }

    /// kernels/m61m31.cu instantiates mm_pass_r1 ..= mm_pass_r<MM_PASS_MAX_STAGES>, as load_kernels asks.
    #[test]
    fn the_m61m31_passes_are_instantiated_up_to_their_max() {
        let text = SOURCES.iter().find(|(name, _)| *name == "m61m31.cu").map(|(_, t)| *t).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("MM_PASS_KERNEL(")).collect();
        let expected: Vec<String> = (1..=MM_PASS_MAX_STAGES).map(|r| format!("MM_PASS_KERNEL({r})")).collect();
        assert_eq!(lines, expected);
    }
}
