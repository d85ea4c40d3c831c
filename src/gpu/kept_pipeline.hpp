// The standard kernels' pipelines, kept by the Backend that compiled them:
// a call runs the Pipelines the last call ran, with their frames (host
// inputs, lengths, bind groups) made once, where a Pipeline compiled per
// call makes them all again at its first dispatch.
#pragma once

#include "vyre/checked.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu::detail {

// The Pipeline `backend` keeps for `program`, compiled (Backend::compile) at
// the first ask and again once the device it runs on is lost. `program`
// must live as long as the Backend (a program_memo program lives until
// exit): it is known by its address. Threads may share what this returns:
// a Batch holds each Pipeline's dispatcher while it runs, so two calls'
// batches take turns on it.
Pipeline kept_pipeline(Backend &backend, const CheckedProgram &program);

} // namespace vyre::gpu::detail
