// The single door to generated/: typed parse functions and the schema index,
// the error catalogues, the A2A protobuf-es messages, and ProtoJSON helpers.
import "./text-encoding.js";
export * from "../../generated/contract.js";
export type * from "../../generated/types.js";
export { aguiErrorCatalogue, a2aErrorCatalogue } from "../../generated/error-catalogue.js";
export * as pb from "../../generated/proto/lf/a2a/v1/a2a_pb.js";
export * as rpc from "../../generated/proto/google/rpc/error_details_pb.js";
export { decodeProtoJson, encodeProtoJson, ProtoJsonError } from "./protojson.js";
export * from "./errors.js";
