// The schema index and its validators alone (no protobuf descriptors, no error
// catalogue): what `iac-code contract validate` loads.
export { schemaIndex, violations } from "../../generated/contract.js";
