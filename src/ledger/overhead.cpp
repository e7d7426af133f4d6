// Overhead tenant: what the framework holds that is not a tensor of the model. The CUDA context
// and PyTorch's reservation are part of the device's reserve (see device.h), so nothing is added
// per plan here yet.
#include "ledger/context.h"

namespace trainmem::ledger {

void add_overhead(const Context& /*ctx*/, Items& /*items*/) {}

}  // namespace trainmem::ledger
