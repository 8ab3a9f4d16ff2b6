/**
 * The strict switch of the adapters whose frameworks pass one on to the model provider (the AI
 * SDK's `strict`, LangChain's `bindTools(..., { strict })`, the Agents SDK's `strict`). Strict mode
 * refuses a schema with an optional field, so with the switch on a tool offers keel's schema in the
 * form strict mode takes; the model then says "absent" with null, which the boundary reads as absent.
 */
import { type JsonSchema, type StrictJsonSchema, strictSchema } from "../boundary/schema.js";
import type { BindOptions } from "./binding.js";

export interface StrictBindOptions extends BindOptions {
	/**
	 * Offer schemas strict mode accepts: every field required, the optional ones nullable. Turn it on
	 * together with the framework's own strict switch; keel validates the arguments either way.
	 */
	strict?: boolean;
}

/** The schema a tool offers the model under `options`. */
export function offeredSchema(schema: JsonSchema, options: StrictBindOptions): JsonSchema | StrictJsonSchema {
	return options.strict ? strictSchema(schema) : schema;
}
