func main() {
	if ok {
		return nil
	}
}
