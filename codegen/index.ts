export { generate, specHash, type GeneratedFile } from './generate.ts';
export {
  createCodegen,
  flowSchemaText,
  writeFileAtomic,
  type Codegen,
  type CodegenFile,
  type CodegenOptions,
  type CodegenResult,
  type GenerateOptions,
} from './codegen.ts';
export { loadToolCatalog, type ToolCatalog, type ToolCatalogEntry } from './tool-catalog.ts';
export { scaffoldTool, implText, newSpecSkeleton, SPEC_SCHEMA_REFERENCE } from './scaffold.ts';
export { CODEGEN_PROBLEM_CODES, type Problem, type CodegenProblemCode } from './problems.ts';
export { machineNames, camelCase, pascalCase } from './names.ts';
export { GENERATOR_VERSION } from './version.ts';
export { CHECK_CACHE_FILE } from './check-cache.ts';
export { printExpression, type ExpressionSite } from './emit/expressions.ts';
export { loadMcpProject, snapshotFile, toolsModuleFile, MCP_CONFIG_FILE, type McpProject, type McpProjectServer } from './mcp/project.ts';
