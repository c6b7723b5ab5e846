// Finds a project's operations of one kind (audits, reports) without a label scan.
// $params: none
CREATE INDEX operation_kind IF NOT EXISTS FOR (o:Operation) ON (o.project, o.kind)
