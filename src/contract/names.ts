// The contract names and titles alone (no validator is loaded): what
// `iac-code contract list` prints and `contract validate` checks names against.
export { contractTitles } from "../../generated/contract-names.js";
