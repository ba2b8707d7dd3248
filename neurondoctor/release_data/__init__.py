"""Release data: the AWS release manifests as the doctor reads them (see docs/contracts.md §5)."""
