#include "lib/core/domain/spec_choice.hpp"

#include "lib/core/base/errors.hpp"

namespace roofline {

SpecChoice choose_judging_spec(const SpecRegistry& registry, const std::string& device_name,
                               const std::optional<std::string>& requested,
                               const std::function<GpuSpec()>& derive) {
  const GpuSpec* own = registry.find_for_device(device_name);
  SpecChoice choice;
  if (own != nullptr) {
    choice.measured = *own;
  } else if (derive) {
    choice.measured = derive();
  } else if (!requested) {
    throw InputError("no spec file names \"" + device_name +
                     "\": pass --gpu NAME or --spec FILE to judge its kernels");
  }
  if (requested) {
    choice.spec = registry.find(*requested);
    choice.projection = own == nullptr || own->key != choice.spec.key;
    if (choice.projection)
      choice.note = "projection: measured on " + device_name + ", judged against " +
                    choice.spec.name + " peaks";
    return choice;
  }
  choice.spec = choice.measured;
  if (own != nullptr) return choice;
  choice.note = "no spec file names \"" + device_name +
                "\": judged against peaks derived from its properties (approximate); pass "
                "--spec FILE (or --gpu NAME) for a reviewed spec";
  return choice;
}

}  // namespace roofline
