//! Batches of launches as CUDA graphs: each captured on first use and replayed after, one
//! launch per replay instead of one per kernel. [`Graphs`] holds an engine's (its squarings in
//! batches of 2^k, its product); the pipelines queue their work through it.

use super::launch::capture;
use super::module::{cuda_err, Device};
use crate::engine::EngineError;
use cudarc::driver::CudaGraph;

/// The CUDA graphs hold 2^0 … 2^GRAPH_LOG2_MAX iterations.
const GRAPH_LOG2_MAX: usize = 5;

/// A captured batch of iterations.
struct Graph(CudaGraph);

// SAFETY: the graph is only touched through `&mut Graphs` (an engine's), so never from two threads at once,
// which is all CUDA asks of graph objects; its context is made current by cudarc on each call.
unsafe impl Send for Graph {}

/// An engine's graphs, each captured on first use.
#[derive(Default)]
pub(crate) struct Graphs {
    /// squarings[k]: 2^k iterations.
    squarings: [Option<Graph>; GRAPH_LOG2_MAX + 1],
    /// acc := acc·state (about ten launches on the multi-pass pipeline).
    product: Option<Graph>,
}

impl Graphs {
    /// Queue `count` squarings as replays of graphs of 2^k iterations (count in binary, at
    /// most 2^GRAPH_LOG2_MAX per replay), each captured from `batch(2^k)`, which queues 2^k
    /// squarings.
    pub fn squarings(
        &mut self,
        dev: &Device,
        count: u64,
        batch: impl Fn(u64) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let mut left = count;
        while left > 0 {
            let k = (63 - left.leading_zeros() as usize).min(GRAPH_LOG2_MAX);
            launch_cached(&mut self.squarings[k], dev, || batch(1 << k))?;
            left -= 1 << k;
        }
        Ok(())
    }

    /// Queue the product (queued by `multiply`) as a replay of its graph.
    pub fn product(&mut self, dev: &Device, multiply: impl Fn() -> Result<(), EngineError>) -> Result<(), EngineError> {
        launch_cached(&mut self.product, dev, multiply)
    }
}

/// Launch the graph in `slot`, captured from a run of `op` on first use.
fn launch_cached(
    slot: &mut Option<Graph>,
    dev: &Device,
    op: impl Fn() -> Result<(), EngineError>,
) -> Result<(), EngineError> {
    if slot.is_none() {
        *slot = Some(Graph(capture(dev, 1, op)?));
    }
    slot.as_ref().expect("captured above").0.launch().map_err(cuda_err("graph launch"))
}
