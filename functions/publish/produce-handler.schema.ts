// The schema registry's codecs (avsc, protobufjs, ajv), imported by the produce route on its first
// record with a schema. A module of this route's own: esbuild names the chunk after it
// (produce-handler.schema-<hash>.mjs), which serverless-esbuild then packs only with this
// function (it leaves `<other entry>.*` out of every other function's zip).
export {
  createGlueEncoder,
  createRegistryEncoder,
} from '../adapters/schema-registry/record-encoder.js';
