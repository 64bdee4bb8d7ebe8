// Goldilocks on the four-step pipeline: the unit `goldilocks-fs` (kernels/manifest.txt).
#include "goldilocks/four_step.cuh"
