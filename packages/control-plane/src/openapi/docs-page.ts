import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Errors } from '@gatehouse/core';
import type { AdminContext } from '../http/context';

/**
 * GET /docs: the OpenAPI document rendered by Swagger UI, served from the installed `swagger-ui-dist` package (no
 * network at run time: the page loads its script and style from `/docs/…` and the document from `/openapi.json`).
 */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse Admin API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an online validator
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null, tryItOutEnabled: false });
`;

let assetDir: string | null = null;
function swaggerUiDir(): string {
  assetDir ??= dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return assetDir;
}

export function mountDocsPage(ctx: AdminContext): void {
  ctx.resources.add(
    '/docs',
    {
      get: (_req, res) => {
        res.type('html').send(PAGE);
      },
    },
    { get: { summary: 'This document, rendered (Swagger UI)', tag: 'docs', responses: { 200: { description: 'An HTML page', schema: { type: 'string' } } } } },
  );
  ctx.resources.add(
    '/docs/:asset',
    {
      get: (req, res, next) => {
        const name = String(req.params.asset);
        if (name === 'init.js') {
          res.type(ASSETS['swagger-ui-bundle.js']!).send(INIT);
          return;
        }
        const type = ASSETS[name];
        if (!type) throw Errors.notFound();
        // `root`: the store path has dot segments (`.pnpm`), which sendFile refuses in the path it is given
        res.sendFile(name, { root: swaggerUiDir(), headers: { 'Content-Type': type }, maxAge: '1h' }, (err) => {
          if (err) next(err);
        });
      },
    },
    {
      get: {
        summary: 'A script or style of the rendered document',
        tag: 'docs',
        params: { asset: '`swagger-ui-bundle.js`, `swagger-ui.css` or `init.js`' },
        responses: { 200: { description: 'The asset', schema: { type: 'string' } }, 404: { description: 'Not found', schema: 'Message' } },
      },
    },
  );
}
