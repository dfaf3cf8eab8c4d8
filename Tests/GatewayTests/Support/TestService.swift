import Resolvers
import Schema

/// The engine's query service as the gateway tests use it.
func makeTestService() -> QueryService {
    QueryService()
}
