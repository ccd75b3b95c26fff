"""The application layer: every operation of detente, declared once, and the one door
every surface enters by.

- :mod:`.declaration`: what an operation is (:class:`~.declaration.Operation`: name,
  HTTP method and path, handler, authorization rule, binding of the acting principal,
  rate limit, conflict codes);
- one module per area, each declaring its operations with their handlers: :mod:`.system`,
  :mod:`.claims`, :mod:`.meetings`, :mod:`.agents`, :mod:`.memory`, :mod:`.gates`,
  :mod:`.index`; :mod:`.catalog` lists them all in the HTTP API's order;
- :mod:`.authorize`: the rules (roles, record ownership, participants, CODEOWNERS
  owners) and :mod:`.local_principal`: who a local process acts as;
- :mod:`.door`: :class:`~.door.Operations`, which runs an operation for any surface:
  the acting principal, the rule, the rate limit, the input (a raw body is validated
  with the operation's model), then the handler, which meets the service.

The HTTP routes (:mod:`detente.api.routes.operations`) and the OpenAPI document's error
docs (:mod:`detente.api.error_docs`) are derived from the catalog; the in-process client
(:mod:`detente.client.inprocess`, used by the CLI, ``detente mcp``, the MCP endpoint of a
served app and the hooks) calls :class:`~.door.Operations`; the HTTP client fills in the
declared paths. Importing the package, the catalog or a declaration module loads neither
pydantic, the records nor the service.
"""
