func main() {
	if ok {
		log()
		return
	}
}
