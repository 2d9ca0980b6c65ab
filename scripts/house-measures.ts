// `pnpm measures`: the code-health measures of the product sources (packages/*/src, tests and the testkit aside), printed with their limits: `as unknown as` casts, files over 300 lines, functions over 100 lines, import
// cycles between files, product sources importing the testkit. Read with TypeScript's own parser, so a function's
// length is its body's, not a guess from indentation.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMITS = { casts: 10, fileLines: 300, functionLines: 100 };

function productFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') continue;
    if (statSync(path).isDirectory()) out.push(...productFiles(path));
    else if (/\.ts$/.test(name) && !/\.(test|cases|d)\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** the testkit is test code: it serves the tests of every package and ships in no product */
const files = readdirSync(join(root, 'packages')).filter((pkg) => pkg !== 'testkit').flatMap((pkg) => {
  const src = join(root, 'packages', pkg, 'src');
  return statSync(src, { throwIfNoEntry: false })?.isDirectory() ? productFiles(src) : [];
});
const rel = (file: string) => relative(root, file);

interface FunctionLength {
  file: string;
  name: string;
  lines: number;
}

const casts: string[] = [];
const longFiles: Array<[string, number]> = [];
const longFunctions: FunctionLength[] = [];
const testkitImports: string[] = [];
const imports = new Map<string, string[]>();

function functionName(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
    if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  }
  return '(anonymous)';
}

/** a relative import of a product file, resolved as the bundler resolves it (extensionless, or a folder's index) */
function resolveImport(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (files.includes(candidate)) return candidate;
  }
  return null;
}

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  if (lines > LIMITS.fileLines) longFiles.push([rel(file), lines]);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const edges: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) && ts.isAsExpression(node.expression) && node.expression.type.kind === ts.SyntaxKind.UnknownKeyword) {
      casts.push(`${rel(file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
    }
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node)) {
      const body = node.body;
      if (body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(body.getEnd()).line;
        if (last - first + 1 > LIMITS.functionLines) longFunctions.push({ file: rel(file), name: functionName(node), lines: last - first + 1 });
      }
    }
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      const typeOnly = ts.isImportDeclaration(node) ? node.importClause?.isTypeOnly === true : node.isTypeOnly;
      if (spec.startsWith('@gatehouse/testkit')) testkitImports.push(rel(file));
      if (spec.startsWith('.') && !typeOnly) {
        const target = resolveImport(file, spec);
        if (target) edges.push(target);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  imports.set(file, edges);
}

/** the strongly connected components of the import graph with more than one file: each is a cycle (Tarjan) */
function importCycles(): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of imports.get(v) ?? []) {
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const file of files) if (!indexOf.has(file)) connect(file);
  return cycles;
}

const cycles = importCycles();
const report = (what: string, count: number, limit: number | string, details: string[]) => {
  console.log(`${what}: ${count} (limit ${limit})`);
  for (const d of details) console.log(`  ${d}`);
};
console.log(`product sources: ${files.length} files under packages/*/src (tests aside)\n`);
report('`as unknown as` casts', casts.length, LIMITS.casts, casts);
report(`files over ${LIMITS.fileLines} lines`, longFiles.length, '0, rule engines and contract files aside', longFiles.sort((a, b) => b[1] - a[1]).map(([f, n]) => `${n}  ${f}`));
report(`functions over ${LIMITS.functionLines} lines`, longFunctions.length, 0, longFunctions.sort((a, b) => b.lines - a.lines).map((f) => `${f.lines}  ${f.name}  ${f.file}`));
report('import cycles between files (type-only imports aside)', cycles.length, 0, cycles.map((c) => c.join(' ⇄ ')));
report('product sources importing @gatehouse/testkit', testkitImports.length, 0, testkitImports);
