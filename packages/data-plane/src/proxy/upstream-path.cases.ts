/**
 * Kong 3.9's path-handling cases (its `router_path_handling_tests` fixture), one row per line of it: service path,
 * route path (null: the route matches on a host), strip_path, path_handling, request path, the path the upstream
 * receives. `BOTH` stands for both values of a column. Shared by the unit table test and the end-to-end test.
 */
export interface PathHandlingCase {
  /** the fixture's line number, 1-based */
  line: number;
  servicePath: string;
  routePath: string | null;
  stripPath: boolean;
  pathHandling: 'v0' | 'v1';
  requestPath: string;
  expectedPath: string;
}

const BOTH = 'both';
type Both = typeof BOTH;
type Row = [string, string | null, boolean | Both, 'v0' | 'v1' | Both, string, string];

const ROWS: Row[] = [
  ["/", "/", BOTH, BOTH, "/", "/"],
  ["/", "/", BOTH, BOTH, "/route", "/route"],
  ["/", "/", BOTH, BOTH, "/route/", "/route/"],
  ["/", "/", BOTH, BOTH, "/routereq", "/routereq"],
  ["/", "/", BOTH, BOTH, "/route/req", "/route/req"],
  ["/", "/route", false, BOTH, "/route", "/route"],
  ["/", "/route", false, BOTH, "/route/", "/route/"],
  ["/", "/route", false, BOTH, "/routereq", "/routereq"],
  ["/", "/route", true, BOTH, "/route", "/"],
  ["/", "/route", true, BOTH, "/route/", "/"],
  ["/", "/route", true, BOTH, "/routereq", "/req"],
  ["/", "/route/", false, BOTH, "/route/", "/route/"],
  ["/", "/route/", false, BOTH, "/route/req", "/route/req"],
  ["/", "/route/", true, BOTH, "/route/", "/"],
  ["/", "/route/", true, BOTH, "/route/req", "/req"],
  ["/srv", "/rou", false, "v0", "/roureq", "/srv/roureq"],
  ["/srv", "/rou", false, "v1", "/roureq", "/srvroureq"],
  ["/srv", "/rou", true, "v0", "/roureq", "/srv/req"],
  ["/srv", "/rou", true, "v1", "/roureq", "/srvreq"],
  ["/srv/", "/rou", false, BOTH, "/rou", "/srv/rou"],
  ["/srv/", "/rou", true, "v0", "/rou", "/srv"],
  ["/srv/", "/rou", true, "v1", "/rou", "/srv/"],
  ["/service", "/", BOTH, BOTH, "/", "/service"],
  ["/service", "/", BOTH, "v0", "/route", "/service/route"],
  ["/service", "/", BOTH, "v1", "/route", "/serviceroute"],
  ["/service", "/", BOTH, "v0", "/route/", "/service/route/"],
  ["/service", "/", BOTH, "v1", "/route/", "/serviceroute/"],
  ["/service", "/", BOTH, "v0", "/routereq", "/service/routereq"],
  ["/service", "/", BOTH, "v1", "/routereq", "/serviceroutereq"],
  ["/service", "/", BOTH, "v0", "/route/req", "/service/route/req"],
  ["/service", "/", BOTH, "v1", "/route/req", "/serviceroute/req"],
  ["/service", "/route", false, "v0", "/route", "/service/route"],
  ["/service", "/route", false, "v1", "/route", "/serviceroute"],
  ["/service", "/route", false, "v0", "/route/", "/service/route/"],
  ["/service", "/route", false, "v1", "/route/", "/serviceroute/"],
  ["/service", "/route", false, "v0", "/routereq", "/service/routereq"],
  ["/service", "/route", false, "v1", "/routereq", "/serviceroutereq"],
  ["/service", "/route", true, BOTH, "/route", "/service"],
  ["/service", "/route", true, BOTH, "/route/", "/service/"],
  ["/service", "/route", true, "v0", "/routereq", "/service/req"],
  ["/service", "/route", true, "v1", "/routereq", "/servicereq"],
  ["/service", "/route/", false, "v0", "/route/", "/service/route/"],
  ["/service", "/route/", false, "v1", "/route/", "/serviceroute/"],
  ["/service", "/route/", false, "v0", "/route/req", "/service/route/req"],
  ["/service", "/route/", false, "v1", "/route/req", "/serviceroute/req"],
  ["/service", "/route/", true, "v0", "/route/", "/service/"],
  ["/service", "/route/", true, "v1", "/route/", "/service"],
  ["/service", "/route/", true, "v0", "/route/req", "/service/req"],
  ["/service", "/route/", true, "v1", "/route/req", "/servicereq"],
  ["/service/", "/", BOTH, "v0", "/route/", "/service/route/"],
  ["/service/", "/", BOTH, "v1", "/route/", "/service/route/"],
  ["/service/", "/", BOTH, BOTH, "/", "/service/"],
  ["/service/", "/", BOTH, BOTH, "/route", "/service/route"],
  ["/service/", "/", BOTH, BOTH, "/routereq", "/service/routereq"],
  ["/service/", "/", BOTH, BOTH, "/route/req", "/service/route/req"],
  ["/service/", "/route", false, BOTH, "/route", "/service/route"],
  ["/service/", "/route", false, BOTH, "/route/", "/service/route/"],
  ["/service/", "/route", false, BOTH, "/routereq", "/service/routereq"],
  ["/service/", "/route", true, "v0", "/route", "/service"],
  ["/service/", "/route", true, "v1", "/route", "/service/"],
  ["/service/", "/route", true, BOTH, "/route/", "/service/"],
  ["/service/", "/route", true, BOTH, "/routereq", "/service/req"],
  ["/service/", "/route/", false, BOTH, "/route/", "/service/route/"],
  ["/service/", "/route/", false, BOTH, "/route/req", "/service/route/req"],
  ["/service/", "/route/", true, BOTH, "/route/", "/service/"],
  ["/service/", "/route/", true, BOTH, "/route/req", "/service/req"],
  ["/", null, BOTH, BOTH, "/", "/"],
  ["/", null, BOTH, BOTH, "/route", "/route"],
  ["/", null, BOTH, BOTH, "/route/", "/route/"],
  ["/service", null, BOTH, BOTH, "/", "/service"],
  ["/service", null, BOTH, "v0", "/route", "/service/route"],
  ["/service", null, BOTH, "v1", "/route", "/serviceroute"],
  ["/service", null, BOTH, "v0", "/route/", "/service/route/"],
  ["/service", null, BOTH, "v1", "/route/", "/serviceroute/"],
  ["/service/", null, BOTH, BOTH, "/", "/service/"],
  ["/service/", null, BOTH, BOTH, "/route", "/service/route"],
  ["/service/", null, BOTH, BOTH, "/route/", "/service/route/"],
  ["/service", "/route", true, "v0", "/route./req", "/service/req"],
  ["/service", "/route", true, "v1", "/route./req", "/servicereq"],
  ["/service/", "/route", true, BOTH, "/route./req", "/service/req"],
  ["/service", "/route", true, "v0", "/route%2E/req", "/service/req"],
  ["/service", "/route", true, "v1", "/route%2E/req", "/servicereq"],
  ["/service/", "/route", true, BOTH, "/route%2E/req", "/service/req"],
  ["/service", "/route", true, "v0", "/route%2e/req", "/service/req"],
  ["/service", "/route", true, "v1", "/route%2e/req", "/servicereq"],
  ["/service/", "/route", true, BOTH, "/route%2e/req", "/service/req"],
  ["/service", "/route", true, "v0", "/route../req", "/service/req"],
  ["/service", "/route", true, "v1", "/route../req", "/servicereq"],
  ["/service/", "/route", true, BOTH, "/route../req", "/service/req"],
  ["/service", "/route", true, "v0", "/route%2E%2E/req", "/service/req"],
  ["/service", "/route", true, "v1", "/route%2E%2E/req", "/servicereq"],
  ["/service/", "/route", true, BOTH, "/route%2E%2E/req", "/service/req"],
  ["/service", "/route", true, "v0", "/route%2e%2E/req", "/service/req"],
  ["/service", "/route", true, "v1", "/route%2e%2E/req", "/servicereq"],
  ["/service/", "/route", true, BOTH, "/route%2e%2E/req", "/service/req"],
  ["/service", "/route", false, "v0", "/route./req", "/service/route./req"],
  ["/service", "/route", false, "v1", "/route./req", "/serviceroute./req"],
  ["/service/", "/route", false, BOTH, "/route./req", "/service/route./req"],
  ["/service", "/route", false, "v0", "/route%2E/req", "/service/route./req"],
  ["/service", "/route", false, "v1", "/route%2E/req", "/serviceroute./req"],
  ["/service/", "/route", false, BOTH, "/route%2E/req", "/service/route./req"],
  ["/service", "/route", false, "v0", "/route%2e/req", "/service/route./req"],
  ["/service", "/route", false, "v1", "/route%2e/req", "/serviceroute./req"],
  ["/service/", "/route", false, BOTH, "/route%2e/req", "/service/route./req"],
  ["/service", "/route", false, "v0", "/route../req", "/service/route../req"],
  ["/service", "/route", false, "v1", "/route../req", "/serviceroute../req"],
  ["/service/", "/route", false, BOTH, "/route../req", "/service/route../req"],
  ["/service", "/route", false, "v0", "/route%2E%2E/req", "/service/route../req"],
  ["/service", "/route", false, "v1", "/route%2E%2E/req", "/serviceroute../req"],
  ["/service/", "/route", false, BOTH, "/route%2E%2E/req", "/service/route../req"],
  ["/service", "/route", false, "v0", "/route%2e%2E/req", "/service/route../req"],
  ["/service", "/route", false, "v1", "/route%2e%2E/req", "/serviceroute../req"],
  ["/service/", "/route", false, BOTH, "/route%2e%2E/req", "/service/route../req"],
];

/** Every row expanded: one case per strip_path value and path_handling value, as Kong's `expand` does. */
export const PATH_HANDLING_CASES: PathHandlingCase[] = ROWS.flatMap(([servicePath, routePath, strip, handling, requestPath, expectedPath], index) => {
  const strips = strip === BOTH ? [false, true] : [strip];
  const handlings = handling === BOTH ? (['v0', 'v1'] as const) : [handling];
  return strips.flatMap((stripPath) =>
    handlings.map((pathHandling) => ({ line: index + 1, servicePath, routePath, stripPath, pathHandling, requestPath, expectedPath })),
  );
});
