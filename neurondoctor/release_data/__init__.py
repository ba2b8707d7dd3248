"""Release data: the AWS release manifests as the doctor reads them (see ARCHITECTURE.md §5)."""
