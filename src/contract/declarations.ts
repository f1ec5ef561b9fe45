// What a stage kind or a task declares about itself, checked against a spec before anything runs.
import type { Json } from "../util/json.js";
import type { RecordType } from "./records.js";

/** A parameter's type and allowed values: a JSON-schema subset, checked with ajv. */
export type ParamType = "integer" | "number" | "string" | "boolean" | "object" | "array" | "null";

export interface ParamDecl {
  type: ParamType | readonly ParamType[];
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  enum?: readonly Json[];
  pattern?: string;
  items?: ParamDecl;
  properties?: Record<string, ParamDecl>;
  additionalProperties?: boolean | ParamDecl;
  required?: readonly string[];
}

export type ParamDecls = Record<string, ParamDecl>;

/** An input a stage kind reads: a stage's outputs (named, with their record types), a release, or a file. */
export interface InputDecl {
  /** Outputs the referenced stage must have: output name -> record type. */
  outputs?: Record<string, RecordType>;
  /** The referenced stage produces a release (its outputs are release files, named by path). */
  release?: boolean;
  /** A file input (`{ file: path }`) instead of a stage. */
  file?: boolean;
  optional?: boolean;
  description?: string;
}

export interface KindDeclarations {
  /** Named inputs. With `otherFiles`, any further input name is a file (a prompts stage's templates). */
  inputs: Record<string, InputDecl>;
  otherFiles?: boolean;
  /** Output name -> record type, or `release`: release files, named by path (known only when run). */
  outputs: Record<string, RecordType> | "release";
  params: ParamDecls;
  /** Parameters a spec must set. */
  required?: readonly string[];
}
