package api

// DocumentedRoutes are the "METHOD path" keys of routeDocs, for the drift test.
func DocumentedRoutes() []string {
	keys := make([]string, 0, len(routeDocs))
	for k := range routeDocs {
		keys = append(keys, k)
	}
	return keys
}

// OpenAPIFaults are what keeps the OpenAPI document of s from describing all its routes.
func OpenAPIFaults(s *Server) []string {
	_, faults := buildOpenAPI(s.routeList)
	return faults
}
